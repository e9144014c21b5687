package feed_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/forkspace/forkspace/audit"
	"github.com/forkspace/forkspace/feed"
	"github.com/forkspace/forkspace/meta/memmeta"
)

// BenchmarkWakeOneOfMany: 1,000 subscribers, each following its own
// workspace; each iteration records an event of one of them and waits
// until its subscriber has it. The other 999 need not wake.
func BenchmarkWakeOneOfMany(b *testing.B) {
	const subscribers = 1000
	log := audit.NewLog(memmeta.New())
	f, err := feed.New(context.Background(), log, feed.Options{})
	if err != nil {
		b.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	got := make([]chan int64, subscribers)
	for i := range subscribers {
		got[i] = make(chan int64, 1)
		c, err := f.Subscribe(ctx, f.Last(), feed.Filter{WorkspaceID: fmt.Sprint("w", i)})
		if err != nil {
			b.Fatal(err)
		}
		wg.Go(func() {
			for {
				es, err := c.Next(ctx)
				if err != nil {
					return
				}
				got[i] <- es[len(es)-1].Seq
			}
		})
	}
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		ws := i % subscribers
		record(b, log, fmt.Sprint("w", ws))
		if seq := <-got[ws]; seq != f.Last() {
			b.Fatalf("got %d, want %d", seq, f.Last())
		}
	}
	cancel()
	wg.Wait()
}
