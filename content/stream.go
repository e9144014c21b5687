package content

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/meta"
)

// WriteFrom stores what r yields until io.EOF as a whole new file and
// returns how many bytes it read with what Write returns for the same
// bytes (the same manifest: content-defined chunks do not depend on how
// the bytes arrive). It chunks as it reads: each chunk the bytes decide
// goes to the put workers while the next bytes are read, so a stream of
// any size is stored with one copy of each byte and never waits for a
// commit. An error from r, including its io.ErrUnexpectedEOF (a stream
// cut short), fails the write wrapped; on failure nothing is held.
func (s *Store) WriteFrom(ctx context.Context, r io.Reader) (int64, Manifest, []meta.Object, Intents, error) {
	if s.err != nil {
		return 0, Manifest{}, nil, nil, fmt.Errorf("write content: %w", s.err)
	}
	hp := headPool.Get().(*[headBytes]byte)
	defer headPool.Put(hp)
	k, err := fill(r, hp[:])
	switch {
	case err == io.EOF:
		// All of it: stored as Write stores it, inline when small.
		m, inline, in, err := s.Write(ctx, hp[:k])
		return int64(k), m, inline, in, err
	case err != nil:
		return int64(k), Manifest{}, nil, nil, fmt.Errorf("write content: read: %w", err)
	}
	win := newSharedWindow()
	copy(win.buf[:], hp[:k])
	n, m, in, err := s.chunkStream(ctx, r, win, k)
	if err != nil {
		return n, Manifest{}, nil, nil, fmt.Errorf("write content: %w", err)
	}
	return n, m, nil, in, nil
}

// chunkStream chunks win's first k bytes and the rest of r, reading into
// windows it passes on when full, each returned to windowPool once the
// chunks cut from it are stored.
func (s *Store) chunkStream(ctx context.Context, r io.Reader, win *sharedWindow, k int) (int64, Manifest, Intents, error) {
	p := s.opts.Params
	is := &intentSet{}
	pool := s.newPutPool(ctx, is)
	var exts []Extent
	var hashes []*cas.Hash
	n, start, end, eof := int64(k), 0, k, false
	err := func() error {
		defer func() { win.release() }()
		for {
			// Cut what the bytes decide: a chunk is decided once MaxSize
			// bytes follow its start, or at the end.
			for end-start >= p.MaxSize || eof && start < end {
				c := p.Cut(win.buf[start:end])
				h := new(cas.Hash)
				exts = append(exts, Extent{Size: int64(c)})
				hashes = append(hashes, h)
				win.hold()
				if err := pool.add(putJob{data: win.buf[start : start+c], hash: h, done: win.release}); err != nil {
					return err
				}
				start += c
			}
			if eof {
				return nil
			}
			if end == len(win.buf) {
				// Full: the undecided tail (less than MaxSize) moves to
				// a new window.
				next := newSharedWindow()
				end = copy(next.buf[:], win.buf[start:end])
				start = 0
				win.release()
				win = next
			}
			k, err := r.Read(win.buf[end:min(end+readBytes, len(win.buf))])
			end += k
			n += int64(k)
			switch {
			case err == io.EOF:
				eof = true
			case err != nil:
				return fmt.Errorf("read: %w", err)
			}
			// A failed put, or the caller's ctx ending, stops the
			// reading: pool.ctx.
			if err := pool.ctx.Err(); err != nil {
				return context.Cause(pool.ctx)
			}
		}
	}()
	if werr := pool.wait(); err == nil {
		err = werr
	}
	if err != nil {
		// Nothing will reference the chunks already put.
		return n, Manifest{}, nil, errors.Join(err, s.Release(context.WithoutCancel(ctx), is.ids))
	}
	for i, h := range hashes {
		exts[i].Hash = *h
	}
	return n, Manifest{Size: n, Extents: exts}, is.ids, nil
}

// readBytes is the most WriteFrom asks of one read.
const readBytes = 1 << 20

// headBytes is how much of a stream WriteFrom reads before choosing its
// path: a stream that ends within it (most files) is written from a
// small pooled buffer, not a window. It exceeds MaxInlineMax, so a
// stream that does not end within it is never inline.
const headBytes = 256 << 10

var headPool = sync.Pool{New: func() any { return new([headBytes]byte) }}

// sharedWindow is a pooled window that the chunks cut from it share: it
// returns to windowPool when the reader and every chunk have released it.
type sharedWindow struct {
	buf  *[windowBytes]byte
	refs atomic.Int32
}

func newSharedWindow() *sharedWindow {
	w := &sharedWindow{buf: windowPool.Get().(*[windowBytes]byte)}
	w.refs.Store(1)
	return w
}

func (w *sharedWindow) hold() { w.refs.Add(1) }

func (w *sharedWindow) release() {
	if w.refs.Add(-1) == 0 {
		windowPool.Put(w.buf)
	}
}

// fill reads into buf until it is full or r fails; a clean end of r is
// io.EOF with the bytes read before it. Unlike io.ReadFull it keeps r's
// own io.ErrUnexpectedEOF (an HTTP body whose connection broke) apart
// from a short last read, so a stream cut short is a failure.
func fill(r io.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		k, err := r.Read(buf[n:])
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
