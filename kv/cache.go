package kv

import (
	"container/list"
	"sync"

	"github.com/forkspace/forkspace/cas"
)

// nodeCache is an LRU of decoded nodes bounded by the memory they hold
// (node.mem): keys, values, slice headers and bookkeeping.
type nodeCache struct {
	mu    sync.Mutex
	max   int64
	used  int64
	order *list.List // front = most recently used; values are *cacheEntry
	items map[cas.Hash]*list.Element
}

type cacheEntry struct {
	h cas.Hash
	n *node
}

func newNodeCache(max int64) *nodeCache {
	return &nodeCache{max: max, order: list.New(), items: make(map[cas.Hash]*list.Element)}
}

func (c *nodeCache) get(h cas.Hash) *node {
	c.mu.Lock()
	defer c.mu.Unlock()
	e, ok := c.items[h]
	if !ok {
		return nil
	}
	c.order.MoveToFront(e)
	return e.Value.(*cacheEntry).n
}

func (c *nodeCache) add(h cas.Hash, n *node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.items[h]; ok {
		return
	}
	c.items[h] = c.order.PushFront(&cacheEntry{h: h, n: n})
	c.used += int64(n.mem)
	for c.used > c.max && c.order.Len() > 1 {
		old := c.order.Back()
		ce := old.Value.(*cacheEntry)
		c.order.Remove(old)
		delete(c.items, ce.h)
		c.used -= int64(ce.n.mem)
	}
}
