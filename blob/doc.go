// Package blob is the contract of forkspace's content-addressed blob store,
// where file chunks live. Drivers: fileblob (a local directory; the
// embedded default), s3blob (a prefix of an S3-compatible bucket) and
// memblob (in memory; a reference implementation); packblob writes the
// small blobs of a store that wants it (blob.Packable: s3blob) together
// in packs indexed in metadata, and diskcache keeps recently read blobs
// of a remote store on local disk (docs/decisions/022).
// blobtest is the conformance suite every driver passes.
//
// Blobs are immutable and named by cas.Sum of their bytes, so Put is
// idempotent and two workspaces holding the same bytes share one blob. Only
// garbage collection deletes blobs.
package blob
