// Package packblob is a blob.Store that writes small blobs together in
// immutable pack objects, indexed in metadata (docs/decisions/022). On a
// store where every object costs a request (S3), one object per small
// file is the known slow case; a pack of 12 MiB carries hundreds of them
// in one PUT.
//
// # Writes
//
// A blob of at most Options.MaxPacked bytes (1 MiB) is appended to the
// pack being filled, in memory; larger blobs go to the underlying blob
// store as objects of their own. The pack is stored when it reaches
// Options.PackSize (12 MiB) or at the next Sync, whichever comes first:
// it is recorded in metadata (state uploading), written to the pack store
// under the BLAKE3 hash of its bytes, then its entries (blob → pack,
// offset, size) are indexed and it turns live, in one transaction. Sync
// waits for every pack sealed before it, so the durability barrier that
// precedes a metadata commit naming new chunks (docs/decisions/021) makes
// them stored and indexed first. Concurrent writers' Syncs share packs.
// Put is PutDeferred followed by that wait.
//
// Until its pack is stored a blob lives only in this process's memory
// (readable through Get). A pack that fails to store fails the Syncs
// waiting for it and its blobs go back into the pack being filled, so the
// next Sync stores them.
//
// # Reads
//
// A blob waiting in memory is read from there; a packed one with one
// ranged read of its pack (blob.RangeReader when the pack store has it);
// any other from the underlying store. A read of a whole packed blob is
// verified against its address. A pack that is missing, too short or
// holds other bytes makes the read errdefs.ErrCorrupt — the index says
// the blob exists — never fs.ErrNotExist and never wrong bytes.
//
// # Deletion and packs
//
// Delete drops a packed blob's index entry; its bytes stay in the pack.
// Compaction (compact.go) rewrites packs whose live fraction has fallen
// below a threshold and deletes retired packs after the grace period.
//
// # Pack format
//
// See pack.go: a random header (no two packs share an address), the
// blobs, their index and a footer, so that a pack can be read without the
// metadata.
package packblob
