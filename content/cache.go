package content

import (
	"container/list"
	"context"
	"errors"
	"sync"

	"github.com/forkspace/forkspace/cas"
)

// cache is an LRU of verified, immutable byte strings by hash, bounded by
// their total length, that also merges concurrent loads of one hash.
// Cached slices are shared and must never be modified.
type cache struct {
	mu       sync.Mutex
	max      int64
	used     int64
	lru      list.List // of *cacheEntry, most recent first
	entries  map[cas.Hash]*list.Element
	inflight map[cas.Hash]*load
}

type cacheEntry struct {
	hash cas.Hash
	data []byte
}

// load is one in-flight fetch; data and err are set before done closes.
type load struct {
	done chan struct{}
	data []byte
	err  error
}

func newCache(max int64) *cache {
	return &cache{max: max, entries: make(map[cas.Hash]*list.Element), inflight: make(map[cas.Hash]*load)}
}

// has reports whether h is cached or being loaded.
func (c *cache) has(h cas.Hash) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, cached := c.entries[h]
	_, loading := c.inflight[h]
	return cached || loading
}

// add caches data under h, evicting the least recently used entries.
// Entries larger than a quarter of the cache are not kept.
func (c *cache) add(h cas.Hash, data []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.addLocked(h, data)
}

// addIfRoom caches data under h if it fits beside what is cached, evicting
// nothing: the admission of a bulk read (grep, export), which passes over
// more bodies than the cache holds and would otherwise evict each before
// its next pass, leaving nothing to hit and churning the heap. A bulk read
// of a tree that fits is cached whole, as add would.
func (c *cache) addIfRoom(h cas.Hash, data []byte) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.used+int64(len(data)) <= c.max {
		c.addLocked(h, data)
	}
}

func (c *cache) addLocked(h cas.Hash, data []byte) {
	size := int64(len(data))
	if _, ok := c.entries[h]; ok || size > c.max/4 {
		return
	}
	c.entries[h] = c.lru.PushFront(&cacheEntry{hash: h, data: data})
	c.used += size
	for c.used > c.max {
		el := c.lru.Back()
		e := el.Value.(*cacheEntry)
		c.lru.Remove(el)
		delete(c.entries, e.hash)
		c.used -= int64(len(e.data))
	}
}

// fetch returns the bytes of h from the cache, from a load already in
// flight, or by calling fn (with ctx) and caching its result. fn must
// return verified bytes. A waiter whose leader failed only because the
// leader's context ended retries with its own.
func (c *cache) fetch(ctx context.Context, h cas.Hash, fn func(context.Context) ([]byte, error)) ([]byte, error) {
	for {
		c.mu.Lock()
		if el, ok := c.entries[h]; ok {
			c.lru.MoveToFront(el)
			c.mu.Unlock()
			return el.Value.(*cacheEntry).data, nil
		}
		if l, ok := c.inflight[h]; ok {
			c.mu.Unlock()
			select {
			case <-l.done:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			if l.err == nil || !isContextErr(l.err) || ctx.Err() != nil {
				return l.data, l.err
			}
			continue
		}
		l := &load{done: make(chan struct{})}
		c.inflight[h] = l
		c.mu.Unlock()

		l.data, l.err = fn(ctx)
		c.mu.Lock()
		delete(c.inflight, h)
		if l.err == nil {
			c.addLocked(h, l.data)
		}
		c.mu.Unlock()
		close(l.done)
		return l.data, l.err
	}
}

func isContextErr(err error) bool {
	return errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)
}
