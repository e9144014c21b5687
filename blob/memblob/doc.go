// Package memblob is an in-memory blob.Store: the reference implementation
// of the blob contract, and a store for tests and throwaway workspaces.
//
// Put copies the caller's bytes and Get returns fresh copies, so callers
// may reuse their buffers. Whole-blob reads are verified like every driver
// does, which makes memblob a faithful stand-in for a durable store.
// Nothing survives the process.
package memblob
