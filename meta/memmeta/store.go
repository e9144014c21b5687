package memmeta

import (
	"context"
	"fmt"
	"io/fs"
	"sync"
	"sync/atomic"
	"time"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/meta"
)

// Store is an in-memory meta.Store. The zero value is not usable; call New.
type Store struct {
	mu      sync.Mutex // serialises Updates and Close
	current atomic.Pointer[state]
	closed  atomic.Bool
	lastNow atomic.Int64
}

var _ meta.Store = (*Store)(nil)

// New returns an empty store.
func New() *Store {
	s := &Store{}
	s.current.Store(newState())
	return s
}

// View implements meta.Store: fn reads the snapshot current when View
// started. Writes through the Tx fail with errdefs.ErrReadOnly.
func (s *Store) View(ctx context.Context, fn func(meta.Tx) error) error {
	if s.closed.Load() {
		return errClosed("view")
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("view: %w", err)
	}
	return fn(&tx{store: s, s: s.current.Load(), readOnly: true})
}

// Update implements meta.Store. Updates run one at a time; when ctx is done
// before fn starts, fn does not run and Update returns ctx's error.
func (s *Store) Update(ctx context.Context, fn func(meta.Tx) error) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Load() {
		return errClosed("update")
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("update: %w", err)
	}
	next := *s.current.Load()
	t := &tx{store: s, s: &next}
	defer t.finished.Store(true)
	if err := fn(t); err != nil {
		return err
	}
	s.current.Store(&next)
	return nil
}

// GetNode implements meta.Store.
func (s *Store) GetNode(ctx context.Context, h cas.Hash) ([]byte, error) {
	return s.getObject("get node", func(st *state) map[cas.Hash]object { return st.nodes }, h)
}

// GetInline implements meta.Store.
func (s *Store) GetInline(ctx context.Context, h cas.Hash) ([]byte, error) {
	return s.getObject("get inline body", func(st *state) map[cas.Hash]object { return st.inline }, h)
}

// GetInlines implements meta.Store.
func (s *Store) GetInlines(ctx context.Context, hs []cas.Hash, fn func(cas.Hash, []byte) error) error {
	if s.closed.Load() {
		return errClosed("get inline bodies")
	}
	inline := s.current.Load().inline
	seen := make(map[cas.Hash]bool, len(hs))
	for _, h := range hs {
		o, ok := inline[h]
		if !ok || seen[h] {
			continue
		}
		seen[h] = true
		if err := fn(h, append([]byte{}, o.data...)); err != nil {
			return err
		}
	}
	return nil
}

func (s *Store) getObject(op string, table func(*state) map[cas.Hash]object, h cas.Hash) ([]byte, error) {
	if s.closed.Load() {
		return nil, errClosed(op)
	}
	o, ok := table(s.current.Load())[h]
	if !ok {
		return nil, fmt.Errorf("%s %s: %w", op, h.Short(), fs.ErrNotExist)
	}
	return append([]byte{}, o.data...), nil
}

// Close implements meta.Store: it waits for a running Update, then drops
// the data. Calls after Close, Close included, fail with fs.ErrClosed.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed.Swap(true) {
		return errClosed("close")
	}
	s.current.Store(newState())
	return nil
}

// now is the store's clock: the wall clock, strictly increasing.
func (s *Store) now() time.Time {
	for {
		last := s.lastNow.Load()
		n := time.Now().UnixNano()
		if n <= last {
			n = last + 1
		}
		if s.lastNow.CompareAndSwap(last, n) {
			return time.Unix(0, n).UTC()
		}
	}
}

func errClosed(op string) error {
	return fmt.Errorf("%s: memory metadata: %w", op, fs.ErrClosed)
}
