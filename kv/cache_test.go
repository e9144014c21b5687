package kv

import (
	"context"
	"runtime"
	"testing"
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
