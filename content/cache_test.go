package content

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/forkspace/forkspace/cas"
)

// get returns the cached bytes of h, as a fetch that must not load.
func get(c *cache, h cas.Hash) ([]byte, bool) {
	data, err := c.fetch(context.Background(), h, func(context.Context) ([]byte, error) {
		return nil, errors.New("not cached")
	})
	return data, err == nil
}

func TestCacheEvictsLeastRecentlyUsed(t *testing.T) {
	c := newCache(400)
	h := func(i int) cas.Hash { return cas.Sum([]byte(fmt.Sprint(i))) }
	for i := range 4 {
		c.add(h(i), make([]byte, 100))
	}
	get(c, h(0)) // 1 is now the oldest
	c.add(h(4), make([]byte, 100))
	if _, ok := get(c, h(1)); ok {
		t.Fatal("least recently used entry survived")
	}
	for _, i := range []int{0, 2, 3, 4} {
		if _, ok := get(c, h(i)); !ok {
			t.Fatalf("entry %d evicted", i)
		}
	}
	if c.used != 400 {
		t.Fatalf("cache accounts %d bytes, want 400", c.used)
	}
	c.add(h(5), make([]byte, 101))
	if _, ok := get(c, h(5)); ok || c.used != 400 {
		t.Fatalf("entry over a quarter of the cache kept (used %d)", c.used)
	}
}

// TestCacheAddIfRoom: a bulk read's admission fills free room and evicts
// nothing, so a pass over more than the cache holds leaves what was cached.
func TestCacheAddIfRoom(t *testing.T) {
	c := newCache(400)
	h := func(i int) cas.Hash { return cas.Sum([]byte(fmt.Sprint(i))) }
	c.add(h(0), make([]byte, 100))
	for i := 1; i < 10; i++ {
		c.addIfRoom(h(i), make([]byte, 100))
	}
	for i := range 10 {
		if _, ok := get(c, h(i)); ok != (i < 4) {
			t.Errorf("entry %d cached: %v, want %v", i, ok, i < 4)
		}
	}
	if c.used != 400 {
		t.Fatalf("cache accounts %d bytes, want 400", c.used)
	}
	c.add(h(10), make([]byte, 100)) // an ordinary add still evicts
	if _, ok := get(c, h(10)); !ok {
		t.Fatal("add after the cache filled kept nothing")
	}
}

func TestCacheMergesConcurrentFetches(t *testing.T) {
	c := newCache(1 << 20)
	h := cas.Sum([]byte("x"))
	var calls atomic.Int64
	release := make(chan struct{})
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			data, err := c.fetch(context.Background(), h, func(context.Context) ([]byte, error) {
				calls.Add(1)
				<-release
				return []byte("x"), nil
			})
			if err != nil || string(data) != "x" {
				t.Errorf("fetch: %q, %v", data, err)
			}
		})
	}
	for !c.has(h) {
		runtime.Gosched()
	}
	close(release)
	wg.Wait()
	if n := calls.Load(); n != 1 {
		t.Fatalf("%d loads of one hash, want 1", n)
	}
	if _, ok := get(c, h); !ok {
		t.Fatal("fetched bytes not cached")
	}
}

// TestCacheRetriesAfterLeaderCancel checks that a waiter does not inherit
// the cancellation of the fetch it waited on.
func TestCacheRetriesAfterLeaderCancel(t *testing.T) {
	c := newCache(1 << 20)
	h := cas.Sum([]byte("y"))
	leaderCtx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	done := make(chan error)
	go func() {
		_, err := c.fetch(leaderCtx, h, func(ctx context.Context) ([]byte, error) {
			close(started)
			<-ctx.Done()
			return nil, ctx.Err()
		})
		done <- err
	}()
	<-started
	waiter := make(chan []byte)
	go func() {
		data, err := c.fetch(context.Background(), h, func(context.Context) ([]byte, error) { return []byte("y"), nil })
		if err != nil {
			t.Errorf("waiter: %v", err)
		}
		waiter <- data
	}()
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("leader: %v", err)
	}
	if got := <-waiter; string(got) != "y" {
		t.Fatalf("waiter got %q", got)
	}
}
