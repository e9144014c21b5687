package kv

import (
	"context"
	"runtime"
	"testing"

	"github.com/forkspace/forkspace/cas"
)

// TestCacheBoundsMemory: a cache of decoded nodes holds about what it is
// bounded to, not a multiple of it (nodes were once counted by their
// encoded size and held ~3.6 times that decoded, prefix-compressed keys
// spelled out, a slice header per key and value).
func TestCacheBoundsMemory(t *testing.T) {
	const bound = 4 << 20
	builder, src := newStore(1)
	root := build(t, builder, src, numberedKeys(300_000))
	s := New(src, Options{Seed: 1, CacheBytes: bound})
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	before := heap()
	err := s.Scan(context.Background(), root, nil, nil, func(k, v []byte) error { return nil })
	if err != nil {
		t.Fatal(err)
	}
	held := heap() - before
	t.Logf("the cache counts %d bytes and holds %d", s.cache.used, held)
	if s.cache.used > bound || held > 3*bound/2 {
		t.Fatalf("a cache bounded to %d bytes counts %d and holds %d", bound, s.cache.used, held)
	}
	runtime.KeepAlive(s)
}

// TestCacheSecondChance: the clock evicts an entry not read since it last
// passed, keeps one read meanwhile, and bounds what it holds.
func TestCacheSecondChance(t *testing.T) {
	c := newNodeCache(300)
	h := func(i byte) cas.Hash { return cas.Hash{i} }
	for i := range byte(3) {
		c.add(h(i), &node{mem: 100})
	}
	c.get(h(0))
	c.add(h(3), &node{mem: 100}) // the clock passes 0 (read) and evicts 1
	for i, want := range []bool{true, false, true, true} {
		if got := c.get(h(byte(i))) != nil; got != want {
			t.Errorf("entry %d cached: %v, want %v", i, got, want)
		}
	}
	for i := range byte(100) {
		c.add(h(10+i), &node{mem: 100})
		if c.used > c.max || len(c.items) != len(c.ring) {
			t.Fatalf("after %d adds: %d bytes in %d entries (%d in the clock), bound %d", i+1, c.used, len(c.items), len(c.ring), c.max)
		}
	}
	for i, e := range c.ring {
		if e.slot != i || c.items[e.h] != e {
			t.Fatalf("clock slot %d holds an entry that thinks it is in slot %d", i, e.slot)
		}
	}
}
