package forkspace_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	forkspace "github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/meta"
)

// BenchmarkSharedNodes measures small writes through one node against
// three nodes sharing one PostgreSQL database and one bucket (three
// shared stores in one process, each with its own connections and
// notifications), with 12 writers each in a workspace of its own and
// with all 12 in one workspace (where nodes retry each other's commits;
// a write that lost every attempt is counted, not failed: stale-writes).
// Every write has bytes of its own: writers putting one identical small
// body at once from several processes all update its row's touch time,
// and on PostgreSQL such a hot row serialises them (decision 023).
// Results in docs/benchmarks.md.
//
//	go test -run '^$' -bench SharedNodes -benchtime 3000x .
func BenchmarkSharedNodes(b *testing.B) {
	const writers = 12
	for _, nodes := range []int{1, 3} {
		for _, one := range []bool{false, true} {
			layout := "own-workspaces"
			if one {
				layout = "one-workspace"
			}
			b.Run(fmt.Sprintf("nodes=%d/%s", nodes, layout), func(b *testing.B) {
				ctx := context.Background()
				fx := newSharedFixture(b)
				stores := make([]*forkspace.Store, nodes)
				for i := range stores {
					stores[i] = fx.open(b)
				}
				ws := make([]*forkspace.Workspace, writers)
				for i := range ws {
					name := fmt.Sprint("w", i)
					if one {
						name = "w0"
					}
					st := stores[i%nodes]
					w, err := st.Workspace(ctx, name)
					if err != nil {
						if w, err = stores[0].Create(ctx, name, forkspace.CreateOptions{}); err == nil {
							w, err = st.Workspace(ctx, name)
						}
					}
					if err != nil {
						b.Fatal(err)
					}
					ws[i] = w
				}
				body := make([]byte, 1<<10)
				var next, stale atomic.Int64
				b.ResetTimer()
				var wg sync.WaitGroup
				for i, w := range ws {
					wg.Go(func() {
						for {
							n := next.Add(1)
							if n > int64(b.N) {
								return
							}
							data := fmt.Appendf(slices.Clone(body[:0]), "%d ", n)
							data = append(data, body[len(data):]...)
							err := w.WriteFile(ctx, fmt.Sprintf("f%d-%d", i, n%200), data, 0o644)
							switch {
							case errors.Is(err, meta.ErrHeadMoved):
								stale.Add(1) // lost to other nodes every attempt (decision 023)
							case err != nil:
								b.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
				b.ReportMetric(float64(int64(b.N)-stale.Load())/b.Elapsed().Seconds(), "writes/s")
				b.ReportMetric(float64(stale.Load()), "stale-writes")
			})
		}
	}
}
