// Package diskcache keeps recently read blobs of a remote blob store in a
// local directory, bounded in bytes, least recently used first out
// (docs/decisions/022).
//
// Wrap puts a Cache in front of a blob.Store: a read of a whole blob is
// served from the cache when it holds the blob, else read from the store
// and added; a ranged read is served from a cached blob when there is
// one. Writes, listings and deletions go to the store (a deletion drops
// the cached copy too).
//
// Crash safety: a blob is written to DIR/tmp/ and renamed into place
// whole, so a partly written file is never under a blob's name; files
// left in DIR/tmp/ are removed at Open. Every read from the cache is
// verified against the blob's address (BLAKE3): a damaged or torn file (a
// power loss, another process) is dropped and the blob read from the
// store. The cache does not fsync: losing it loses nothing.
//
// Layout: DIR/ab/<64 hex> for blob ab…, DIR/tmp/. Open rebuilds the LRU
// order from the files' modification times, which a hit refreshes. Two
// processes should not share a directory: each would evict blindly of
// the other (reads stay verified, so nothing wrong is ever served).
package diskcache
