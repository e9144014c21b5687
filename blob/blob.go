package blob

import (
	"context"
	"time"

	"github.com/forkspace/forkspace/cas"
)

// Store is a content-addressed blob store: immutable byte strings named by
// their BLAKE3 hash.
//
// Errors: a missing blob is fs.ErrNotExist; bytes that do not match their
// address are errdefs.ErrCorrupt; a bad range is fs.ErrInvalid; use after
// Close is fs.ErrClosed. All methods are safe for concurrent use.
type Store interface {
	// Put stores data under id, which must be cas.Sum(data). Put is
	// idempotent: storing an existing blob succeeds without rewriting it.
	// When Put returns nil the blob is durable (it survives a crash of the
	// process and, for drivers that sync, of the machine) and a concurrent
	// reader sees either nothing or the whole blob, never a prefix.
	Put(ctx context.Context, id cas.Hash, data []byte) error

	// Get returns length bytes of the blob starting at off; length < 0
	// means to the end. A whole-blob read (off 0, length < 0) is verified
	// against id and fails with errdefs.ErrCorrupt on mismatch. Reading past
	// the end returns the bytes that exist; off beyond the size is
	// fs.ErrInvalid.
	Get(ctx context.Context, id cas.Hash, off, length int64) ([]byte, error)

	// Stat returns the blob's size and the time it was stored.
	Stat(ctx context.Context, id cas.Hash) (Info, error)

	// List calls fn for every blob, in no particular order. Blobs stored or
	// deleted during List may or may not be seen. An error from fn stops
	// List and is returned.
	List(ctx context.Context, fn func(Info) error) error

	// Delete removes the blob. Deleting a missing blob is not an error.
	Delete(ctx context.Context, id cas.Hash) error

	// Close releases resources. Calls after Close fail with fs.ErrClosed.
	Close() error
}

// Locator is implemented by stores that can name where their blobs live,
// stably and without credentials ("s3://bucket/prefix"), so metadata can
// record it and refuse to be opened over another store's blobs.
type Locator interface {
	Location() string
}

// IDLister is implemented by stores that list their blobs' addresses more
// cheaply than their Info (fileblob: from the directories alone, without a
// stat of every file), for a collector that needs the size and time of
// only the few blobs nothing references.
type IDLister interface {
	// ListIDs calls fn with the address of every blob, like List.
	ListIDs(ctx context.Context, fn func(cas.Hash) error) error
}

// Info describes a stored blob.
type Info struct {
	ID      cas.Hash
	Size    int64
	ModTime time.Time
}

// Deferred is implemented by stores that can leave a blob's bytes in the
// operating system's cache until a durability barrier, so that writing
// many blobs waits for the disk once instead of once per blob
// (docs/decisions/021).
type Deferred interface {
	// PutDeferred stores data under id like Put, except that when it
	// returns the blob survives the death of the process, not yet a
	// power loss: that takes a Sync.
	PutDeferred(ctx context.Context, id cas.Hash, data []byte) error
	// Sync makes every blob stored before the call durable, whoever
	// stored it.
	Sync(ctx context.Context) error
}

// Packable is implemented by stores where every object costs a request
// (s3blob), so that small blobs are better written together in packs
// (blob/packblob, docs/decisions/022). PackStore returns a store on the
// same backend for the pack objects, apart from the blobs: its objects
// are never listed, read or deleted as blobs of the store (s3blob:
// PREFIX/packs/). Closing either store leaves the other open.
type Packable interface {
	PackStore() Store
}

// RangeReader is implemented by stores that read a range the caller knows
// to lie inside a blob in one request (s3blob: without asking for the
// blob's size first). ReadRange returns exactly n bytes at off, not
// verified; a blob that is shorter is errdefs.ErrCorrupt, a missing one
// fs.ErrNotExist.
type RangeReader interface {
	ReadRange(ctx context.Context, id cas.Hash, off, n int64) ([]byte, error)
}
