// Package s3mount is a lazy, optionally writable mount of a prefix of an
// S3-compatible bucket (AWS S3, Cloudflare R2, MinIO, versitygw…).
//
// List pages through ListObjectsV2 under the prefix and reports every object
// as an Entry whose Path is the key with the prefix stripped, whose Version
// is the object's ETag, and whose ModTime is its LastModified. Fetch is one
// GetObject. Put is one PutObject, conditional on If-Match when the caller
// passes the version it last saw (a failed precondition is
// errdefs.ErrConflict); Delete is one DeleteObject.
//
// Invariants:
//   - The prefix is a directory: "a" and "a/" both mean the keys under
//     "a/" (never "ab/…"). Keys that are not valid relative paths (empty
//     segments, ".", "..", a trailing "/" directory marker) are not listed.
//     A key that is also a directory ("a" beside "a/b") is shadowed by the
//     directory and not listed.
//   - Credentials come from Options or, when Options has none, from the
//     environment (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY,
//     AWS_SESSION_TOKEN). They live only in the client held in memory:
//     nothing this package returns (entries, versions, errors, Source)
//     contains them, and a URL carrying credentials is rejected.
//   - Checksums are computed and validated only when the S3 API requires
//     them, so servers that do not implement the newer flexible checksums
//     (R2, MinIO, gofakes3…) accept every request.
//
// Writes carry preconditions (mount.Writable): a Put with a version sends
// If-Match, a Put of a new file If-None-Match: *, a Delete with a version
// If-Match; mount.Unconditional sends none. ListPrefix lists below one
// directory (write-back of a removed directory), ListPages lets an index
// stop at its caps.
//
// Errors: a missing key or bucket is fs.ErrNotExist, a refused or unknown
// credential is fs.ErrPermission (versitygw answers an unknown access key
// with 404 XAdminUserNotFound), a failed precondition is
// errdefs.ErrConflict (as is a key refused below an object, or on a
// directory of keys), an endpoint that cannot be reached (connection
// refused, DNS failure, no answer within Options.Timeout — default 2
// minutes, URL timeout=30s) is ErrUnreachable; writes on a read-only
// mount are errdefs.ErrReadOnly. Path operations return *fs.PathError.
// The SDK's cause stays wrapped.
//
// A Mount is safe for concurrent use.
//
// Use from code:
//
//	m, err := s3mount.Open(s3mount.Options{Bucket: "b", Prefix: "skills"})
//
// or from a mount URL (the CLI's form):
//
//	s3://bucket/prefix?endpoint=http://127.0.0.1:9000&region=us-east-1&path_style=true&mode=rw
package s3mount
