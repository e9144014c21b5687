// Package s3blob is a blob.Store in a prefix of an S3-compatible bucket
// (AWS S3, Cloudflare R2, MinIO, versitygw…), one object per blob.
//
// # Layout
//
//	<prefix>/blobs/<hex>   the blob whose lowercase hex address is <hex>
//	<prefix>/packs/<hex>   pack objects (PackStore: blob.Packable), which
//	                       blob/packblob writes and indexes in metadata
//
// Several stores share a bucket under different prefixes without seeing
// each other: a store lists only the keys directly below its own
// <prefix>/blobs/ whose name is a whole address, so neither "a" and "ab"
// nor "a" and "a/b" overlap.
//
// # Requests
//
// Put is one PutObject with If-None-Match: * (conditional create): the
// server refuses to replace an existing blob (412, or 409 from servers
// that report a concurrent conditional write that way), which Put takes as
// success once a HeadObject shows the object has the right size, and
// replaces unconditionally otherwise (a damaged object). A server that
// does not implement the condition (501 NotImplemented, or 400 naming the
// header) makes the store fall back, for its lifetime, to HeadObject then
// an unconditional PutObject: still idempotent, with a window in which
// two writers of the same blob both write (identical bytes). Every Put
// signs the SHA-256 of its body (x-amz-content-sha256), which the server
// checks, so a body damaged on the way is refused, not stored (a
// Content-MD5 on top would hash every byte a third time).
// S3 commits a PutObject whole or not at all, so a reader never sees a
// prefix and a retried Put never leaves half a blob.
//
// Get is one GetObject (a Range for a partial read); a whole-blob Get is
// verified against its address (errdefs.ErrCorrupt); ReadRange
// (blob.RangeReader) reads a range known to exist without the HeadObject
// a ranged Get first sends. Stat is HeadObject,
// List pages through ListObjectsV2, Delete is DeleteObject.
//
// # Faults
//
// Requests are retried with jittered exponential backoff on what the SDK
// deems transient (500, 502, 503 SlowDown, throttling, connection errors)
// and on a request that gets no answer within Options.Timeout (each
// attempt's own deadline), up to Options.MaxAttempts attempts (default
// 5). A body cut short is read again within the same attempts. What is
// left after the last attempt is returned, the SDK's cause wrapped.
//
// # Credentials
//
// Credentials come from Options or, when it has none, the environment
// (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN); they live
// only in the client held in memory. A store URL (ParseURL) carrying
// credentials anywhere is refused.
//
// # Errors
//
// A missing blob is fs.ErrNotExist (the store layer above turns a blob
// that metadata references and the bucket lacks into errdefs.ErrCorrupt),
// a refused credential fs.ErrPermission, an endpoint that cannot be
// reached s3client.ErrUnreachable, use after Close fs.ErrClosed.
package s3blob
