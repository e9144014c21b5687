package memblob

import (
	"context"
	"fmt"
	"io/fs"
	"sync"
	"time"

	"github.com/forkspace/forkspace/blob"
	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/errdefs"
)

var _ blob.Store = (*Store)(nil)

// Store keeps blobs in a map. The zero value is not usable; call New.
type Store struct {
	mu     sync.RWMutex
	blobs  map[cas.Hash]entry
	closed bool
}

type entry struct {
	data []byte
	mod  time.Time
}

// New returns an empty Store.
func New() *Store { return &Store{blobs: make(map[cas.Hash]entry)} }

// Put stores a copy of data under id. Storing an existing blob keeps the
// first copy and its time.
func (s *Store) Put(ctx context.Context, id cas.Hash, data []byte) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("put blob %s: %w", id, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("put blob %s: %w", id, fs.ErrClosed)
	}
	if _, ok := s.blobs[id]; !ok {
		s.blobs[id] = entry{data: append([]byte(nil), data...), mod: time.Now()}
	}
	return nil
}

// Get returns a copy of the requested range (see blob.Store.Get).
func (s *Store) Get(ctx context.Context, id cas.Hash, off, length int64) ([]byte, error) {
	e, err := s.lookup(ctx, "get", id)
	if err != nil {
		return nil, err
	}
	size := int64(len(e.data))
	if off < 0 || off > size {
		return nil, fmt.Errorf("get blob %s: %w: offset %d outside size %d", id, fs.ErrInvalid, off, size)
	}
	end := size
	if length >= 0 {
		end = min(size, off+length)
	}
	out := append([]byte(nil), e.data[off:end]...)
	if off == 0 && end == size && !cas.Verify(id, out) {
		return nil, fmt.Errorf("get blob %s: %w", id, errdefs.ErrCorrupt)
	}
	return out, nil
}

// Stat returns the blob's size and the time it was first stored.
func (s *Store) Stat(ctx context.Context, id cas.Hash) (blob.Info, error) {
	e, err := s.lookup(ctx, "stat", id)
	if err != nil {
		return blob.Info{}, err
	}
	return blob.Info{ID: id, Size: int64(len(e.data)), ModTime: e.mod}, nil
}

func (s *Store) lookup(ctx context.Context, op string, id cas.Hash) (entry, error) {
	if err := ctx.Err(); err != nil {
		return entry{}, fmt.Errorf("%s blob %s: %w", op, id, err)
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return entry{}, fmt.Errorf("%s blob %s: %w", op, id, fs.ErrClosed)
	}
	e, ok := s.blobs[id]
	if !ok {
		return entry{}, fmt.Errorf("%s blob %s: %w", op, id, fs.ErrNotExist)
	}
	return e, nil
}

// List calls fn for a snapshot of the blobs taken when List starts; fn may
// call other methods of s.
func (s *Store) List(ctx context.Context, fn func(blob.Info) error) error {
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return fmt.Errorf("list blobs: %w", fs.ErrClosed)
	}
	infos := make([]blob.Info, 0, len(s.blobs))
	for id, e := range s.blobs {
		infos = append(infos, blob.Info{ID: id, Size: int64(len(e.data)), ModTime: e.mod})
	}
	s.mu.RUnlock()
	for _, info := range infos {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("list blobs: %w", err)
		}
		if err := fn(info); err != nil {
			return err
		}
	}
	return nil
}

// Delete removes the blob; a missing blob is not an error.
func (s *Store) Delete(ctx context.Context, id cas.Hash) error {
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("delete blob %s: %w", id, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("delete blob %s: %w", id, fs.ErrClosed)
	}
	delete(s.blobs, id)
	return nil
}

// Close drops all blobs. Later calls, Close included, fail with
// fs.ErrClosed.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return fmt.Errorf("close blob store: %w", fs.ErrClosed)
	}
	s.closed = true
	s.blobs = nil
	return nil
}
