package content

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sync"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/errdefs"
)

// Read tuning: how many chunks one ReadAt fetches at once, and how many
// chunks past the end of a read are fetched in the background when the
// read reaches the end of a chunk.
const (
	readParallel = 4
	readAhead    = 4
)

// ReadAt reads len(p) bytes of the file described by m at off, with io.ReaderAt
// semantics (io.EOF at or past the end). Holes read as zeros. A chunk whose
// bytes do not match its hash fails with errdefs.ErrCorrupt, a missing
// chunk or inline body with fs.ErrNotExist, a negative offset with
// fs.ErrInvalid. Safe for concurrent use.
func (s *Store) ReadAt(ctx context.Context, m Manifest, p []byte, off int64) (int, error) {
	if s.err != nil {
		return 0, fmt.Errorf("read content: %w", s.err)
	}
	if off < 0 {
		return 0, fmt.Errorf("read content at %d: %w", off, fs.ErrInvalid)
	}
	if off >= m.Size {
		return 0, io.EOF
	}
	if err := m.check(); err != nil {
		return 0, fmt.Errorf("read content: %w", err)
	}
	n := int(min(int64(len(p)), m.Size-off))
	if err := s.readExtents(ctx, m, p[:n], off, true); err != nil {
		return 0, fmt.Errorf("read content: %w", err)
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// readExtents fills p with the bytes of m at off; p must lie within m.
// ahead allows reading ahead of a read that reaches the end of a chunk.
func (s *Store) readExtents(ctx context.Context, m Manifest, p []byte, off int64, ahead bool) error {
	type job struct {
		ext  Extent
		dst  []byte
		skip int64 // offset of dst within the extent
	}
	var jobs []job
	end := off + int64(len(p))
	last := -1
	pos := int64(0)
	for i, e := range m.Extents {
		eEnd := pos + e.Size
		if eEnd > off && pos < end {
			lo, hi := max(pos, off), min(eEnd, end)
			dst := p[lo-off : hi-off]
			if e.Hash.IsZero() {
				clear(dst)
			} else {
				jobs = append(jobs, job{ext: e, dst: dst, skip: lo - pos})
				if hi == eEnd {
					last = i
				}
			}
		}
		if eEnd >= end {
			break
		}
		pos = eEnd
	}
	if ahead && last >= 0 && !m.Inline {
		s.prefetch(m.Extents[last+1:])
	}
	fill := func(ctx context.Context, j job) error {
		data, err := s.chunk(ctx, j.ext, m.Inline)
		if err != nil {
			return err
		}
		copy(j.dst, data[j.skip:])
		return nil
	}
	if len(jobs) == 1 {
		return fill(ctx, jobs[0])
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var wg sync.WaitGroup
	next := make(chan job)
	for range min(readParallel, len(jobs)) {
		wg.Go(func() {
			for j := range next {
				if err := fill(ctx, j); err != nil {
					cancel(err)
				}
			}
		})
	}
	for _, j := range jobs {
		if ctx.Err() != nil {
			break
		}
		next <- j
	}
	close(next)
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return err
	}
	return nil
}

// chunk returns the verified bytes of a chunk or inline body.
func (s *Store) chunk(ctx context.Context, e Extent, inline bool) ([]byte, error) {
	return s.fetch(ctx, e, func(ctx context.Context) ([]byte, error) {
		if inline {
			return s.loadInline(ctx, e)
		}
		return s.loadChunk(ctx, e)
	})
}

// fetch returns the bytes of e from the cache or from load, which returns
// them verified, and checks their length.
func (s *Store) fetch(ctx context.Context, e Extent, load func(context.Context) ([]byte, error)) ([]byte, error) {
	data, err := s.cache.fetch(ctx, e.Hash, load)
	if err != nil {
		return nil, err
	}
	return data, checkSize(e, data)
}

// checkSize fails unless data, verified as e's bytes, is as long as e
// says: a manifest whose sizes lie is damaged.
func checkSize(e Extent, data []byte) error {
	if int64(len(data)) != e.Size {
		return fmt.Errorf("chunk %s has %d bytes, manifest says %d: %w", e.Hash.Short(), len(data), e.Size, errdefs.ErrCorrupt)
	}
	return nil
}

// loadChunk reads a whole chunk; the blob store verifies whole-blob reads.
func (s *Store) loadChunk(ctx context.Context, e Extent) ([]byte, error) {
	data, err := s.opts.Blobs.Get(ctx, e.Hash, 0, -1)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errMissing("chunk", e)
	}
	if err != nil {
		return nil, fmt.Errorf("get chunk %s: %w", e.Hash.Short(), err)
	}
	return data, nil
}

// errMissing is the error of a chunk or inline body that a manifest
// references and the store does not hold: damage (errdefs.ErrCorrupt,
// not fs.ErrNotExist: the file exists, its bytes are gone), named by its
// hash and never by where the driver keeps it.
func errMissing(what string, e Extent) error {
	return fmt.Errorf("%s %s of %d bytes is missing from the store: %w", what, e.Hash.Short(), e.Size, errdefs.ErrCorrupt)
}

func (s *Store) loadInline(ctx context.Context, e Extent) ([]byte, error) {
	data, err := s.opts.Meta.GetInline(ctx, e.Hash)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errMissing("inline body", e)
	}
	if err != nil {
		return nil, fmt.Errorf("get inline body %s: %w", e.Hash.Short(), err)
	}
	return verifyInline(e, data)
}

// verifyInline returns data if it is the inline body e names.
func verifyInline(e Extent, data []byte) ([]byte, error) {
	if !cas.Verify(e.Hash, data) {
		return nil, fmt.Errorf("get inline body %s: %w", e.Hash.Short(), errdefs.ErrCorrupt)
	}
	return data, nil
}

// prefetch starts background fetches of the first chunks of exts that are
// neither cached nor loading, within readAhead chunks and a quarter of the
// cache. Failures are dropped: the read that needs the chunk reports them.
func (s *Store) prefetch(exts []Extent) {
	budget := s.opts.CacheBytes / 4
	count := 0
	for _, e := range exts {
		if count == readAhead || budget < e.Size {
			return
		}
		if e.Hash.IsZero() {
			continue
		}
		count++
		budget -= e.Size
		if s.cache.has(e.Hash) {
			continue
		}
		go func() { _, _ = s.chunk(context.Background(), e, false) }()
	}
}
