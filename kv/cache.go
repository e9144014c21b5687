package kv

import (
	"sync"
	"sync/atomic"

	"github.com/forkspace/forkspace/cas"
)

// nodeCache holds decoded nodes bounded by the memory they hold (node.mem):
// keys, values, slice headers and bookkeeping. It evicts by CLOCK (second
// chance), an approximation of least recently used whose hits only read a
// map under a shared lock and set a flag: every key lookup passes the same
// few nodes at the top of the tree, and an LRU list moved to its front on
// each hit made them a point of contention between readers.
type nodeCache struct {
	mu    sync.RWMutex
	max   int64
	used  int64
	ring  []*cacheEntry // the clock, in no particular order
	hand  int           // the next entry the clock looks at
	items map[cas.Hash]*cacheEntry
}

type cacheEntry struct {
	h    cas.Hash
	n    *node
	slot int         // the entry's index in ring
	used atomic.Bool // read since the clock last passed it
}

func newNodeCache(max int64) *nodeCache {
	return &nodeCache{max: max, items: make(map[cas.Hash]*cacheEntry)}
}

func (c *nodeCache) get(h cas.Hash) *node {
	c.mu.RLock()
	e := c.items[h]
	c.mu.RUnlock()
	if e == nil {
		return nil
	}
	if !e.used.Load() { // a hot entry's flag is set already: no write
		e.used.Store(true)
	}
	return e.n
}

func (c *nodeCache) add(h cas.Hash, n *node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.items[h]; ok {
		return
	}
	e := &cacheEntry{h: h, n: n, slot: len(c.ring)}
	c.items[h] = e
	c.ring = append(c.ring, e)
	c.used += int64(n.mem)
	for c.used > c.max && len(c.ring) > 1 {
		c.evictOne()
	}
}

// evictOne moves the clock's hand past entries read since it last passed
// them, clearing their flags, and evicts the first one that was not.
func (c *nodeCache) evictOne() {
	for {
		if c.hand >= len(c.ring) {
			c.hand = 0
		}
		e := c.ring[c.hand]
		if e.used.Swap(false) {
			c.hand++
			continue
		}
		last := c.ring[len(c.ring)-1]
		c.ring[e.slot], last.slot = last, e.slot
		c.ring[len(c.ring)-1] = nil
		c.ring = c.ring[:len(c.ring)-1]
		delete(c.items, e.h)
		c.used -= int64(e.n.mem)
		return
	}
}
