// Package s3test runs S3 servers on loopback for tests.
//
// StartVersity runs versitygw (versity.go), a real S3 gateway that checks
// SigV4 signatures and honours conditional requests, behind a counting
// proxy; write-back tests run against it. scripts/test.sh builds it into
// a cache directory; missing, its tests fail with CI=true and skip
// elsewhere.
//
// StartFaults runs a reverse proxy in front of one of them that injects
// faults (500, 503 SlowDown, an answer lost after the request took effect,
// a stalled request, a body cut short, 501) into the requests it is told
// to (faults.go), for retry tests.
//
// Start runs gofakes3 with its in-memory backend behind a net/http listener on
// 127.0.0.1, with a middleware in front that counts requests per method and
// path and checks the access key of every signed request.
//
// The server speaks the S3 REST protocol over TCP (path-style addressing),
// so clients exercise their real HTTP stack, signing and error decoding.
// Counting happens at the server: what a test asserts is what went over the
// wire, retries included. Seed writes bypass the HTTP layer and are not
// counted.
//
// Use:
//
//	srv := s3test.Start(t, "bucket")
//	srv.Seed(t, "bucket", "a/b.txt", []byte("hi"))
//	// point a client at srv.URL with srv.AccessKey / srv.SecretKey
//	n := srv.Count("GET", "/bucket/a/b.txt")
package s3test
