// Package content stores file bytes: small files as inline bodies in
// metadata, larger ones as content-defined chunks in a blob.Store, named by
// their BLAKE3 hash, with holes for never-written zero ranges. A Manifest
// lists a file's extents; its Encode form is what metadata stores.
//
// # Writing
//
// A Draft buffers a file's dirty ranges over a base manifest. Commit turns
// it into a new manifest:
//   - at most InlineMax bytes: one inline body, returned to the caller as a
//     meta.Object to store (meta.Tx.PutInline) in the same transaction as
//     the manifest; nothing is written to the blob store;
//   - larger: the file splits into data runs and holes. A hole is a zero
//     range of at least Params.MinSize bytes that was never written (past
//     the old end of file, or a hole of the base); it costs nothing. Data
//     runs are chunked with package chunk; new chunks are hashed and put to
//     the blob store by two workers before Commit returns. With
//     Options.Defer the puts do not wait for the disk; the caller runs
//     Store.Sync before the metadata commit that names the chunks
//     (docs/decisions/021).
//
// Commit reuses base chunks without reading them wherever fresh chunking
// would reproduce them: a base chunk whose bytes are untouched starts where
// chunking stands, and whose end was either content-defined or still ends
// its data run. Re-chunking starts at the first chunk holding a dirty byte
// and stops as soon as a new boundary lands on such a reusable base chunk,
// so a small overwrite of a large file reads and puts one or two chunks.
// When the base was itself chunked this way, the resulting manifest is the
// one chunking the file afresh (with the same holes) would give, so edits
// never degrade deduplication.
//
// A writer still appending calls CommitAhead instead: it stores the
// chunks whose boundaries the bytes so far decide and keeps the rest (less
// than Params.MaxSize) buffered, so a large file is chunked as it is
// written, each chunk put once and none read back. StartAhead runs the
// same commit on another goroutine over what the draft holds, while the
// writer appends to a fresh log: copying, chunking, hashing and putting
// overlap. Only writes run beside it; any other call waits for it and
// lays the bytes written meanwhile over its result (or, if it failed,
// over the draft as it was before it).
//
// Drafts live in memory (1 MiB pooled blocks past the first MiB) up to
// Options.SpillBytes, then in a temp file under os.TempDir that is
// unlinked as soon as it is created, so a crash leaves nothing behind.
//
// # Reading
//
// ReadAt fetches whole chunks, so every byte returned was verified against
// its hash: by the blob store, whose contract verifies whole-blob Gets
// (errdefs.ErrCorrupt), and for inline bodies by this package. Verified
// bytes sit in an LRU cache bounded by Options.CacheBytes; concurrent reads
// of one chunk share one fetch. A large read fetches its chunks in
// parallel, and a read that reaches the end of a chunk starts fetching the
// next few chunks in the background, so sequential readers find them
// ready. ReadFiles, for bulk readers (an export, grep), reads the inline
// bodies of many files together and checks each against the CRC-32C the
// metadata store keeps beside it (meta.CheckedInlines, docs/decisions/034),
// verifying against its hash any body without a matching one; it caches
// them only while the cache has room, so a pass over more than the cache
// holds evicts nothing, and reads a file of one chunk past the cache.
//
// Manifest.Encode is a versioned, compact varint form; Decode rejects
// anything Encode could not have produced with errdefs.ErrCorrupt.
package content
