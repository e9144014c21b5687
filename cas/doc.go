// Package cas defines content addresses: BLAKE3-256 digests of immutable
// byte strings. File chunks in the blob store, small file bodies kept inline
// in metadata and tree nodes of the versioned key space are all named by
// their Hash, so identical bytes are stored once and a name always means the
// same bytes.
package cas
