package diskcache

import (
	"container/list"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/forkspace/forkspace/blob"
	"github.com/forkspace/forkspace/cas"
)

// Cache is a bounded directory of verified blob copies. It is safe for
// concurrent use, not for two processes sharing one directory.
type Cache struct {
	dir string
	max int64

	mu    sync.Mutex
	lru   *list.List // of *entry, most recently used first
	index map[cas.Hash]*list.Element
	size  int64
	stats Stats
}

type entry struct {
	id   cas.Hash
	size int64
}

// Stats counts a cache's traffic since Open.
type Stats struct {
	Hits, Misses, Adds, Evictions, Damaged int64
	// Bytes is the size of the blobs held now.
	Bytes int64
}

// Open opens (creating if needed) the cache in dir, holding at most
// maxBytes (positive; fs.ErrInvalid otherwise). Files beyond the bound
// are evicted, oldest first.
func Open(dir string, maxBytes int64) (*Cache, error) {
	if maxBytes <= 0 {
		return nil, fmt.Errorf("open blob cache %s: %w: size %d", dir, fs.ErrInvalid, maxBytes)
	}
	tmp := filepath.Join(dir, "tmp")
	if err := os.RemoveAll(tmp); err != nil {
		return nil, fmt.Errorf("open blob cache: %w", err)
	}
	if err := os.MkdirAll(tmp, 0o700); err != nil {
		return nil, fmt.Errorf("open blob cache: %w", err)
	}
	c := &Cache{dir: dir, max: maxBytes, lru: list.New(), index: map[cas.Hash]*list.Element{}}
	type found struct {
		id   cas.Hash
		size int64
		mod  time.Time
	}
	var all []found
	subs, err := os.ReadDir(dir)
	if err != nil {
		return nil, fmt.Errorf("open blob cache: %w", err)
	}
	for _, sub := range subs {
		if !sub.IsDir() || len(sub.Name()) != 2 {
			continue
		}
		files, err := os.ReadDir(filepath.Join(dir, sub.Name()))
		if err != nil {
			return nil, fmt.Errorf("open blob cache: %w", err)
		}
		for _, f := range files {
			id, err := cas.Parse(f.Name())
			info, ierr := f.Info()
			if err != nil || ierr != nil || !info.Mode().IsRegular() {
				continue
			}
			all = append(all, found{id, info.Size(), info.ModTime()})
		}
	}
	slices.SortFunc(all, func(a, b found) int { return b.mod.Compare(a.mod) }) // newest first
	for _, f := range all {
		c.index[f.id] = c.lru.PushBack(&entry{f.id, f.size})
		c.size += f.size
	}
	c.mu.Lock()
	c.evictLocked()
	c.mu.Unlock()
	return c, nil
}

func (c *Cache) path(id cas.Hash) string {
	h := id.String()
	return filepath.Join(c.dir, h[:2], h)
}

// Get returns blob id if the cache holds it intact. A damaged copy is
// dropped (a miss).
func (c *Cache) Get(id cas.Hash) ([]byte, bool) {
	c.mu.Lock()
	el, ok := c.index[id]
	if ok {
		c.lru.MoveToFront(el)
	}
	c.mu.Unlock()
	if !ok {
		c.count(func(s *Stats) { s.Misses++ })
		return nil, false
	}
	data, err := os.ReadFile(c.path(id))
	if err != nil || !cas.Verify(id, data) {
		c.Remove(id)
		c.count(func(s *Stats) { s.Damaged++; s.Misses++ })
		return nil, false
	}
	now := time.Now()
	_ = os.Chtimes(c.path(id), now, now) // the LRU order across restarts
	c.count(func(s *Stats) { s.Hits++ })
	return data, true
}

// Add keeps a copy of blob id (data must hash to it), evicting the least
// recently used blobs beyond the bound. A blob larger than an eighth of
// the bound is not kept. Failures to write are ignored: the cache is an
// optimisation.
func (c *Cache) Add(id cas.Hash, data []byte) {
	if int64(len(data)) > c.max/8 {
		return
	}
	c.mu.Lock()
	_, ok := c.index[id]
	c.mu.Unlock()
	if ok {
		return
	}
	if err := c.write(id, data); err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.index[id]; ok {
		return // added meanwhile (same bytes)
	}
	c.index[id] = c.lru.PushFront(&entry{id, int64(len(data))})
	c.size += int64(len(data))
	c.stats.Adds++
	c.evictLocked()
}

// write stores data whole under id's name: temp file, then rename.
func (c *Cache) write(id cas.Hash, data []byte) error {
	f, err := os.CreateTemp(filepath.Join(c.dir, "tmp"), "blob-*")
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		final := c.path(id)
		if err = os.MkdirAll(filepath.Dir(final), 0o700); err == nil {
			err = os.Rename(f.Name(), final)
		}
	}
	if err != nil {
		_ = os.Remove(f.Name())
	}
	return err
}

// Remove drops blob id from the cache.
func (c *Cache) Remove(id cas.Hash) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if el, ok := c.index[id]; ok {
		c.dropLocked(el)
	}
}

func (c *Cache) evictLocked() {
	for c.size > c.max {
		c.dropLocked(c.lru.Back())
		c.stats.Evictions++
	}
}

func (c *Cache) dropLocked(el *list.Element) {
	e := c.lru.Remove(el).(*entry)
	delete(c.index, e.id)
	c.size -= e.size
	_ = os.Remove(c.path(e.id))
}

func (c *Cache) count(fn func(*Stats)) {
	c.mu.Lock()
	fn(&c.stats)
	c.mu.Unlock()
}

// Stats returns the cache's counters.
func (c *Cache) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := c.stats
	s.Bytes = c.size
	return s
}

// Store is a blob.Store read through a Cache (see Wrap).
type Store struct {
	blob.Store
	cache  *Cache
	closed atomic.Bool
}

var (
	_ blob.Store    = (*Store)(nil)
	_ blob.Deferred = (*Store)(nil)
)

// Wrap returns s read through c. The result is a blob.Deferred whether or
// not s is (without it, PutDeferred is Put and Sync does nothing).
func Wrap(s blob.Store, c *Cache) *Store { return &Store{Store: s, cache: c} }

// Get serves whole and ranged reads from the cache when it holds the
// blob, and adds the blobs whole reads fetch.
func (s *Store) Get(ctx context.Context, id cas.Hash, off, length int64) ([]byte, error) {
	if s.closed.Load() {
		return nil, fmt.Errorf("get blob %s: %w", id, fs.ErrClosed)
	}
	if data, ok := s.cache.Get(id); ok {
		if off < 0 || off > int64(len(data)) {
			return nil, fmt.Errorf("get blob %s: %w: offset %d outside size %d", id, fs.ErrInvalid, off, len(data))
		}
		end := int64(len(data))
		if length >= 0 {
			end = min(end, off+length)
		}
		return data[off:end], nil
	}
	data, err := s.Store.Get(ctx, id, off, length)
	if err == nil && off == 0 && length < 0 {
		s.cache.Add(id, data) // verified by the store
	}
	return data, err
}

// Delete deletes the blob from the store and the cache.
func (s *Store) Delete(ctx context.Context, id cas.Hash) error {
	s.cache.Remove(id)
	return s.Store.Delete(ctx, id)
}

// PutDeferred implements blob.Deferred.
func (s *Store) PutDeferred(ctx context.Context, id cas.Hash, data []byte) error {
	if d, ok := s.Store.(blob.Deferred); ok {
		return d.PutDeferred(ctx, id, data)
	}
	return s.Store.Put(ctx, id, data)
}

// Sync implements blob.Deferred.
func (s *Store) Sync(ctx context.Context) error {
	if d, ok := s.Store.(blob.Deferred); ok {
		return d.Sync(ctx)
	}
	return nil
}

// Close closes the store (the cache directory stays); later reads fail
// with fs.ErrClosed, cached or not.
func (s *Store) Close() error {
	s.closed.Store(true)
	return s.Store.Close()
}
