// Package s3gw serves a store over the S3 protocol, so S3 clients (the
// AWS SDKs and CLI, rclone, s3cmd, any S3 library) read and write
// workspaces. The protocol layer is github.com/johannesboyne/gofakes3's
// (path-style requests: http://HOST/BUCKET/KEY); this package is its
// backend over the store, plus the signature check gofakes3 does not do
// (docs/decisions/015-protocol-doors.md says why).
//
// # Buckets and keys
//
// A bucket is a workspace; "NAME@CHECKPOINT" (an ID or a label) is a
// read-only bucket of a checkpoint, reachable but not listed. Creating a
// bucket creates a workspace; deleting one is refused (403): workspaces
// are deleted with the CLI, the API or the tools. A key is a slash path
// in the workspace: parents are created as needed, a key ending in "/"
// is a directory (and an empty directory lists as one), symbolic links are
// not objects. A key that is not a clean relative path ("a//b", "./a",
// "../a") is refused with InvalidArgument.
//
// A PUT replaces the file whole or changes nothing: its directories, its
// bytes and its modification time (from x-amz-meta-mtime, as rclone sends
// it) land in one batch, and a body cut off, refused for quota (403
// QuotaExceeded) or not matching its signed SHA-256 leaves everything as
// it was. Every change is recorded in the audit log as s3.PutObject or
// s3.DeleteObjects by actor "s3:ACCESSKEY". Changes are visible to every
// other surface at once: there is no cache in front of the store.
//
// ETags are the MD5 of the bytes, which clients compare with their own;
// the store hashes with BLAKE3, so an object's MD5 is computed when a
// version of it is first listed or read (and remembered in memory), or
// taken from the upload that wrote it.
//
// # Authentication
//
// Every request must carry an AWS Signature Version 4 — in the
// Authorization header or a presigned URL's query — by an access key that
// Options.Credentials knows; anything else is 403 (AccessDenied,
// InvalidAccessKeyId, SignatureDoesNotMatch, RequestTimeTooSkewed beyond
// 15 minutes). A signed payload hash is checked against the body as it
// streams. Chunk signatures of aws-chunked uploads
// (STREAMING-AWS4-HMAC-SHA256-PAYLOAD) are not checked; the request's
// own signature is.
//
// Once Options.Tokens is enabled (the store holds a token, package auth),
// access keys are token IDs and secret keys their S3 secret keys
// (auth.Tokens.S3Key, checked with the token's expiry and revocation on
// every request), and each request runs in the token's tenant and scope:
// GET and HEAD need read on the bucket, other methods write; a bucket
// outside the token is NoSuchBucket (404), as a missing one; the bucket
// listing shows only the token's.
//
// Multipart uploads are gofakes3's: parts are held in the server's memory
// until CompleteMultipartUpload writes the object in one piece (a missing
// or reordered part is an error and writes nothing); uploads do not
// survive a restart.
package s3gw
