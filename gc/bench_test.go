package gc_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"testing"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/gc"
	"github.com/forkspace/forkspace/internal/benchtree"
	"github.com/forkspace/forkspace/transfer"
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

// benchCache holds the stores benchmarks build, by name, so that several
// benchmarks (and growing fork counts) share one build. TestMain removes
// them.
var benchCache = struct {
	sync.Mutex
	dir    string
	stores map[string]*benchState
}{stores: map[string]*benchState{}}

// benchState is what a cached store holds so far.
type benchState struct {
	dir               string
	files, forks, cps int
}

// benchStore opens the cached store name, building or growing it to: a
// base workspace of files (one in 50 of 64 KiB, the rest of 1 KiB: all
// blobs, since the test store inlines 512 bytes at most) in 100
// directories, imported from a tar stream; forks of it that each write 10
// files of their own; and checkpoints spread over the forks, each after
// one more write. It starts collected.
func benchStore(b *testing.B, name string, files, forks, checkpoints int) *env {
	b.Helper()
	benchCache.Lock()
	defer benchCache.Unlock()
	if kept := os.Getenv("GCBENCH_DIR"); kept != "" {
		return keptStore(b, kept, name, files, forks, checkpoints)
	}
	if benchCache.dir == "" {
		d, err := os.MkdirTemp("", "gc-bench-")
		if err != nil {
			b.Fatal(err)
		}
		benchCache.dir = d
	}
	return buildStore(b, name, files, forks, checkpoints)
}

// keptStore opens the store of these sizes kept under dir (GCBENCH_DIR),
// building it there first if a previous run did not: a large store (a
// million files) takes long to build, and profiling a plan takes many
// runs. Delete dir to rebuild.
func keptStore(b *testing.B, dir, name string, files, forks, checkpoints int) *env {
	b.Helper()
	leaf := fmt.Sprintf("%s-%d-%d-%d", name, files, forks, checkpoints)
	done := filepath.Join(dir, leaf+".built")
	if _, err := os.Stat(done); err == nil {
		return openEnv(b, filepath.Join(dir, leaf, fmt.Sprintf("%s-%d", name, files)))
	}
	benchCache.dir = filepath.Join(dir, leaf)
	if err := os.RemoveAll(benchCache.dir); err != nil {
		b.Fatal(err)
	}
	e := buildStore(b, name, files, forks, checkpoints)
	if err := os.WriteFile(done, nil, 0o600); err != nil {
		b.Fatal(err)
	}
	return e
}

// buildStore builds or grows the store name under benchCache.dir (see
// benchStore).
func buildStore(b *testing.B, name string, files, forks, checkpoints int) *env {
	b.Helper()
	ctx := context.Background()
	st := benchCache.stores[name]
	if st == nil || st.files != files {
		st = &benchState{dir: filepath.Join(benchCache.dir, fmt.Sprintf("%s-%d", name, files)), files: files}
		benchCache.stores[name] = st
		if err := os.MkdirAll(st.dir, 0o700); err != nil {
			b.Fatal(err)
		}
		e := openEnv(b, st.dir)
		base, err := e.s.Create(ctx, "base", forkspace.CreateOptions{})
		if err != nil {
			b.Fatal(err)
		}
		if err := transfer.ImportTar(ctx, base.FS, "/", benchtree.Tar(files), transfer.Options{}); err != nil {
			b.Fatal(err)
		}
		if err := e.s.Close(); err != nil {
			b.Fatal(err)
		}
	}
	e := openEnv(b, st.dir)
	base, err := e.s.Workspace(ctx, "base")
	if err != nil {
		b.Fatal(err)
	}
	for ; st.forks < forks; st.forks++ {
		f, err := base.Fork(ctx, fmt.Sprintf("fork%d", st.forks), forkspace.ForkOptions{})
		if err != nil {
			b.Fatal(err)
		}
		for i := range 10 {
			if err := f.WriteFile(ctx, fmt.Sprintf("d%d/own%d", i, i), benchtree.Bytes(uint64(1e9+st.forks*10+i), 1<<10), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	for ; st.cps < checkpoints; st.cps++ {
		w, err := e.s.Workspace(ctx, fmt.Sprintf("fork%d", st.cps%st.forks))
		if err != nil {
			b.Fatal(err)
		}
		if err := w.WriteFile(ctx, fmt.Sprintf("d%d/cp", st.cps%100), benchtree.Bytes(uint64(2e9+st.cps), 1<<10), 0o644); err != nil {
			b.Fatal(err)
		}
		if _, err := w.Checkpoint(ctx, ""); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := e.s.GC(ctx, forkspace.GCOptions{Grace: gc.NoGrace}); err != nil {
		b.Fatal(err)
	}
	return e
}

// TestMain removes the benchmarks' stores.
func TestMain(m *testing.M) {
	code := m.Run()
	if benchCache.dir != "" && os.Getenv("GCBENCH_DIR") == "" {
		os.RemoveAll(benchCache.dir)
	}
	os.Exit(code)
}

func defaultBenchStore(b *testing.B) *env {
	return benchStore(b, "full", benchSize("GCBENCH_FILES", 10_000), benchSize("GCBENCH_FORKS", 10), benchSize("GCBENCH_CHECKPOINTS", 100))
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
			e := benchStore(b, "forks", files, forks, 0)
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
			if err := f.WriteFile(ctx, fmt.Sprintf("d%d/doomed%d", i%100, i), benchtree.Bytes(uint64(3e9+n*1000+i), size), 0o644); err != nil {
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
