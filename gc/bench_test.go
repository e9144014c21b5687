package gc_test

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/gc"
)

// Benchmark sizes, overridable from the environment (see
// docs/benchmarks.md): GCBENCH_FILES files in the base workspace,
// GCBENCH_FORKS forks of it, GCBENCH_CHECKPOINTS checkpoints spread over
// the forks.
func benchSize(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// benchStore builds a store: a base workspace of files (one in blobEvery
// is a 64 KiB blob, the rest 1 KiB inline bodies) in 100 directories,
// forks that each write 10 files of their own, and checkpoints spread
// over the forks, each after one more write.
func benchStore(b *testing.B, files, forks, checkpoints int) *env {
	b.Helper()
	const blobEvery = 50
	ctx := context.Background()
	e := openEnv(b, b.TempDir())
	base, err := e.s.Create(ctx, "base", forkspace.CreateOptions{})
	if err != nil {
		b.Fatal(err)
	}
	for d := range 100 {
		if err := base.Mkdir(ctx, fmt.Sprintf("d%d", d), 0o755); err != nil {
			b.Fatal(err)
		}
	}
	for i := range files {
		size := 1 << 10
		if i%blobEvery == 0 {
			size = 64 << 10
		}
		if err := base.WriteFile(ctx, fmt.Sprintf("d%d/f%d", i%100, i), randomBytes(uint64(i), size), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	ws := make([]*forkspace.Workspace, forks)
	for f := range forks {
		if ws[f], err = base.Fork(ctx, fmt.Sprintf("fork%d", f), forkspace.ForkOptions{}); err != nil {
			b.Fatal(err)
		}
		for i := range 10 {
			if err := ws[f].WriteFile(ctx, fmt.Sprintf("d%d/own%d", i, i), randomBytes(uint64(1e9+f*10+i), 1<<10), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	for c := range checkpoints {
		w := ws[c%forks]
		if err := w.WriteFile(ctx, fmt.Sprintf("d%d/cp", c%100), randomBytes(uint64(2e9+c), 1<<10), 0o644); err != nil {
			b.Fatal(err)
		}
		if _, err := w.Checkpoint(ctx, ""); err != nil {
			b.Fatal(err)
		}
	}
	// Start from a collected store: the benchmarks measure steady state.
	if _, err := e.s.GC(ctx, forkspace.GCOptions{Grace: gc.NoGrace}); err != nil {
		b.Fatal(err)
	}
	return e
}

func defaultBenchStore(b *testing.B) *env {
	return benchStore(b, benchSize("GCBENCH_FILES", 10_000), benchSize("GCBENCH_FORKS", 10), benchSize("GCBENCH_CHECKPOINTS", 100))
}

func deps(e *env) gc.Deps { return gc.Deps{Meta: e.meta, Blobs: e.blobs, KV: kvOf(e)} }

// BenchmarkPlan measures planning a collection (snapshot, mark, list) of
// a store with many files, forks and checkpoints.
func BenchmarkPlan(b *testing.B) {
	e := defaultBenchStore(b)
	ctx := context.Background()
	b.ReportAllocs()
	var p *gc.Plan
	for b.Loop() {
		var err error
		if p, err = gc.NewPlan(ctx, deps(e), gc.Options{Grace: gc.NoGrace}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(p.Reachable.Nodes), "nodes")
	b.ReportMetric(float64(p.Reachable.Objects()), "objects")
}

// BenchmarkPlanForks shows that planning does not grow with the number of
// forks: their shared subtrees are marked once.
func BenchmarkPlanForks(b *testing.B) {
	files := benchSize("GCBENCH_FILES", 10_000)
	for _, forks := range []int{1, 10, 100} {
		b.Run(fmt.Sprintf("forks=%d", forks), func(b *testing.B) {
			e := benchStore(b, files, forks, 0)
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				if _, err := gc.NewPlan(ctx, deps(e), gc.Options{Grace: gc.NoGrace}); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkExecute measures a whole collection (plan and execute) that
// reclaims a deleted fork: 1,000 files of its own (20 of them blobs) and
// the tree nodes that held them.
func BenchmarkExecute(b *testing.B) {
	e := defaultBenchStore(b)
	ctx := context.Background()
	base, err := e.s.Workspace(ctx, "base")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var reclaimed gc.Counts
	n := 0
	for b.Loop() {
		b.StopTimer()
		n++
		f, err := base.Fork(ctx, "doomed", forkspace.ForkOptions{})
		if err != nil {
			b.Fatal(err)
		}
		for i := range 1000 {
			size := 1 << 10
			if i%50 == 0 {
				size = 64 << 10
			}
			if err := f.WriteFile(ctx, fmt.Sprintf("d%d/doomed%d", i%100, i), randomBytes(uint64(3e9+n*1000+i), size), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		if err := f.Fold(ctx); err != nil {
			b.Fatal(err)
		}
		if err := e.s.Delete(ctx, "doomed"); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		r, err := e.s.GC(ctx, forkspace.GCOptions{Grace: gc.NoGrace})
		if err != nil {
			b.Fatal(err)
		}
		reclaimed = r.Reclaimed
	}
	b.ReportMetric(float64(reclaimed.Objects()), "reclaimed-objects")
}

// BenchmarkCheck measures fsck throughput: bytes of reachable nodes,
// bodies and blobs read and verified per second.
func BenchmarkCheck(b *testing.B) {
	e := defaultBenchStore(b)
	ctx := context.Background()
	r, err := e.s.Check(ctx)
	if err != nil || !r.Clean() {
		b.Fatal(err, r)
	}
	b.SetBytes(r.Checked.Bytes())
	b.ReportAllocs()
	for b.Loop() {
		if _, err := e.s.Check(ctx); err != nil {
			b.Fatal(err)
		}
	}
}
