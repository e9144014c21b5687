package content

import (
	"context"
	"fmt"
	"io/fs"

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

// Defaults and limits of Options.
const (
	DefaultInlineMax  = 16 << 10
	MaxInlineMax      = 64 << 10
	DefaultCacheBytes = 64 << 20
	DefaultSpillBytes = 64 << 20
)

// Options configure a Store. Zero values mean defaults.
type Options struct {
	Blobs blob.Store
	// Meta supplies inline bodies (GetInline).
	Meta meta.Store
	// Params are the store's recorded chunking parameters (default
	// chunk.DefaultParams).
	Params chunk.Params
	// InlineMax is the largest file kept inline in metadata (default 16 KiB;
	// at most 64 KiB).
	InlineMax int
	// CacheBytes bounds the cache of verified chunk and inline bytes
	// (default 64 MiB).
	CacheBytes int64
	// SpillBytes is how many dirty bytes a Draft buffers in memory before
	// moving them to an unlinked temp file (default 64 MiB).
	SpillBytes int64
	// Defer puts new chunks with blob.Deferred.PutDeferred when Blobs has
	// it: when a commit returns they survive the death of the process, a
	// power loss only after Store.Sync, which the caller must run before
	// it commits metadata referencing them (docs/decisions/021). Without
	// Defer each chunk is durable when its put returns.
	Defer bool
}

// withDefaults returns o with zero fields replaced by defaults, or an error
// wrapping fs.ErrInvalid.
func (o Options) withDefaults() (Options, error) {
	if o.Params == (chunk.Params{}) {
		o.Params = chunk.DefaultParams
	}
	if o.InlineMax == 0 {
		o.InlineMax = DefaultInlineMax
	}
	if o.CacheBytes == 0 {
		o.CacheBytes = DefaultCacheBytes
	}
	if o.SpillBytes == 0 {
		o.SpillBytes = DefaultSpillBytes
	}
	switch {
	case o.Blobs == nil || o.Meta == nil:
		return o, fmt.Errorf("content options: %w: Blobs and Meta are required", fs.ErrInvalid)
	case o.InlineMax < 0 || o.InlineMax > MaxInlineMax:
		return o, fmt.Errorf("content options: %w: inline max %d outside [0, %d]", fs.ErrInvalid, o.InlineMax, MaxInlineMax)
	case o.CacheBytes < 0 || o.SpillBytes < 0:
		return o, fmt.Errorf("content options: %w: negative cache or spill size", fs.ErrInvalid)
	}
	if err := o.Params.Validate(); err != nil {
		return o, fmt.Errorf("content options: %w", err)
	}
	return o, nil
}

// Validate reports whether New would accept o; the error wraps
// fs.ErrInvalid.
func (o Options) Validate() error {
	_, err := o.withDefaults()
	return err
}

// Store reads and writes file contents. It is safe for concurrent use.
type Store struct {
	opts     Options
	err      error // invalid options: every operation fails with it
	cache    *cache
	deferred blob.Deferred // Blobs, when Options.Defer and it defers
}

// New returns a Store. Invalid options (see Options.Validate) do not panic:
// every operation of the returned Store fails with the validation error.
func New(opts Options) *Store {
	o, err := opts.withDefaults()
	s := &Store{opts: o, err: err, cache: newCache(o.CacheBytes)}
	if d, ok := o.Blobs.(blob.Deferred); ok && o.Defer {
		s.deferred = d
	}
	return s
}

// Sync makes every chunk put so far durable: the barrier that must
// precede a metadata commit referencing them (see Options.Defer). Without
// deferred puts it does nothing.
func (s *Store) Sync(ctx context.Context) error {
	if s.deferred == nil {
		return nil
	}
	if err := s.deferred.Sync(ctx); err != nil {
		return fmt.Errorf("sync content: %w", err)
	}
	return nil
}

// put stores one new chunk, deferred when configured.
func (s *Store) put(ctx context.Context, h cas.Hash, data []byte) error {
	if s.deferred != nil {
		return s.deferred.PutDeferred(ctx, h, data)
	}
	return s.opts.Blobs.Put(ctx, h, data)
}

// Write stores data as a whole new file (a shortcut for a draft over an
// empty base that does not copy data). Like Draft.Commit it returns the
// inline body, if any, for the caller to store with the manifest, and the
// upload intents to release with it. data is not retained.
func (s *Store) Write(ctx context.Context, data []byte) (Manifest, []meta.Object, Intents, error) {
	if s.err != nil {
		return Manifest{}, nil, nil, fmt.Errorf("write content: %w", s.err)
	}
	size := int64(len(data))
	l := &layout{size: size, dirty: []span{{off: 0, n: size}}, src: bytesSource(data)}
	m, inline, in, err := s.commit(ctx, l)
	if err != nil {
		return Manifest{}, nil, nil, fmt.Errorf("write content: %w", err)
	}
	return m, inline, in, nil
}
