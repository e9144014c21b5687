package content

import (
	"context"

	"github.com/forkspace/forkspace/blob"
	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/chunk"
	"github.com/forkspace/forkspace/meta"
)

// Manifest describes a file's bytes. A file of at most Options.InlineMax
// bytes is one inline body kept in metadata (Inline set, one extent); a
// larger file is a list of chunks in the blob store and holes.
type Manifest struct {
	Size    int64
	Inline  bool
	Extents []Extent
}

// Extent is a run of file bytes: a chunk named by Hash, or Size zero bytes
// (a hole) when Hash is zero.
type Extent struct {
	Hash cas.Hash
	Size int64
}

// Options configure a Store. Zero values mean defaults.
type Options struct {
	Blobs blob.Store
	// Meta supplies inline bodies (GetInline).
	Meta meta.Store
	// Params are the store's recorded chunking parameters.
	Params chunk.Params
	// InlineMax is the largest file kept inline in metadata (default 4 KiB;
	// at most 64 KiB).
	InlineMax int
	// CacheBytes bounds the cache of verified chunk and inline bytes
	// (default 64 MiB).
	CacheBytes int64
}

// Store reads and writes file contents.
type Store struct{}

// New returns a Store.
func New(opts Options) *Store { panic("unimplemented") }

// ReadAt reads len(p) bytes of the file described by m at off, with io.ReaderAt
// semantics (io.EOF at or past the end). Holes read as zeros. A chunk whose
// bytes do not match its hash fails with errdefs.ErrCorrupt.
func (s *Store) ReadAt(ctx context.Context, m Manifest, p []byte, off int64) (int, error) {
	panic("unimplemented")
}

// Draft is a file being written: a base manifest plus dirty ranges buffered
// in memory (spilled to a temp file past a size). Not safe for concurrent use.
type Draft struct{}

// NewDraft starts a draft over base.
func (s *Store) NewDraft(base Manifest) *Draft { panic("unimplemented") }

// Size returns the draft's current size.
func (d *Draft) Size() int64 { panic("unimplemented") }

// Dirty reports whether the draft differs from its base.
func (d *Draft) Dirty() bool { panic("unimplemented") }

// WriteAt writes p at off, extending the file (with a hole) as needed.
func (d *Draft) WriteAt(p []byte, off int64) (int, error) { panic("unimplemented") }

// ReadAt reads the draft's current bytes.
func (d *Draft) ReadAt(ctx context.Context, p []byte, off int64) (int, error) {
	panic("unimplemented")
}

// Truncate sets the draft's size; growth reads as zeros.
func (d *Draft) Truncate(size int64) error { panic("unimplemented") }

// Commit stores the draft's bytes: new chunks go to the blob store before
// Commit returns; a body of at most InlineMax bytes is returned in inline
// for the caller to write (meta.Tx.PutInline) in the same transaction as the
// manifest. Unchanged chunks of the base are reused without being read when
// chunk boundaries allow. The draft stays usable; after Commit its base is
// the returned manifest.
func (d *Draft) Commit(ctx context.Context) (m Manifest, inline []meta.Object, err error) {
	panic("unimplemented")
}

// Discard releases the draft's buffers.
func (d *Draft) Discard() { panic("unimplemented") }

// Encode returns the manifest's stable binary form.
func (m Manifest) Encode() []byte { panic("unimplemented") }

// Decode parses the form produced by Encode; damaged input is
// errdefs.ErrCorrupt.
func Decode(b []byte) (Manifest, error) { panic("unimplemented") }

// Write stores data as a whole new file (a shortcut for a draft over an
// empty base).
func (s *Store) Write(ctx context.Context, data []byte) (Manifest, []meta.Object, error) {
	panic("unimplemented")
}
