package pgmeta_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/internal/pgtest"
	"github.com/forkspace/forkspace/meta/pgmeta"
	"github.com/forkspace/forkspace/vfs"
	"github.com/jackc/pgx/v5"
)

// BenchmarkStoreMeta compares a whole store on PostgreSQL metadata with
// the embedded SQLite one, in one run on one machine (issue 12,
// performance): creates/s of small files through the library, and the
// p50/p99 of fork and checkpoint of a workspace of 1,000 and of 100,000
// files with 100 staged changes each time (folded, untimed, between
// samples). Blobs are
// the store directory's in both. Results in docs/benchmarks.md.
//
//	go test -run '^$' -bench StoreMeta -benchtime 200x ./meta/pgmeta
func BenchmarkStoreMeta(b *testing.B) {
	for _, kind := range []string{"sqlite", "postgres"} {
		b.Run("meta="+kind+"/creates", func(b *testing.B) {
			st, _ := openStore(b, kind)
			benchCreates(b, st)
		})
		for _, files := range []int{1000, 100_000} {
			b.Run(fmt.Sprintf("meta=%s/fork-checkpoint-%dk", kind, files/1000), func(b *testing.B) {
				st, settle := openStore(b, kind)
				benchFork(b, st, files, settle)
			})
		}
	}
}

// openStore opens a store in a new directory, with its metadata in a new
// PostgreSQL database (kind "postgres") or the directory's meta.db, and
// returns what brings the database to its steady state after a bulk
// load: on PostgreSQL, VACUUM ANALYZE (what autovacuum does within a
// minute or so; until then index scans of staging step over the dead
// rows of the load's fold, and a fork right after a 100,000-file import
// took 70-140 ms instead of 10-20).
func openStore(b *testing.B, kind string) (*forkspace.Store, func()) {
	b.Helper()
	ctx := context.Background()
	opts := forkspace.Options{Dir: b.TempDir(), FoldRows: 1 << 20, Logger: quiet}
	settle := func() {}
	if kind == "postgres" {
		url := pgtest.DB(b)
		m, err := pgmeta.Open(ctx, url, pgmeta.Options{Logger: quiet, Exclusive: true})
		if err != nil {
			b.Fatal(err)
		}
		opts.Meta = m
		settle = func() {
			conn, err := pgx.Connect(ctx, url)
			if err != nil {
				b.Fatal(err)
			}
			defer conn.Close(ctx)
			if _, err := conn.Exec(ctx, "VACUUM ANALYZE"); err != nil {
				b.Fatal(err)
			}
		}
	}
	st, err := forkspace.Open(ctx, opts)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { st.Close() })
	return st, settle
}

// benchCreates writes 100 small files per op, 1,000 per directory.
func benchCreates(b *testing.B, st *forkspace.Store) {
	ctx := context.Background()
	w, err := st.Create(ctx, "c", forkspace.CreateOptions{})
	if err != nil {
		b.Fatal(err)
	}
	i := 0
	for b.Loop() {
		for range 100 {
			if i%1000 == 0 {
				if err := w.Mkdir(ctx, "d"+strconv.Itoa(i/1000), 0o755); err != nil {
					b.Fatal(err)
				}
			}
			if err := w.WriteFile(ctx, fmt.Sprintf("d%d/f%d", i/1000, i), []byte("hello "+strconv.Itoa(i)), 0o644); err != nil {
				b.Fatal(err)
			}
			i++
		}
	}
	b.ReportMetric(float64(i)/b.Elapsed().Seconds(), "creates/s")
}

// benchFork forks and checkpoints a workspace of files files of 1 KiB
// (written in one batch and folded, then settle, untimed).
func benchFork(b *testing.B, st *forkspace.Store, files int, settle func()) {
	const changes = 100
	ctx := context.Background()
	w, err := st.Create(ctx, "base", forkspace.CreateOptions{})
	if err != nil {
		b.Fatal(err)
	}
	name := func(i int) string { return fmt.Sprintf("d%04d/f%06d", i/100, i) }
	err = w.Batch(ctx, func(in *vfs.FS) error {
		body := make([]byte, 1<<10)
		for i := range files {
			if i%100 == 0 {
				if err := in.Mkdir(ctx, fmt.Sprintf("d%04d", i/100), 0o755); err != nil {
					return err
				}
			}
			copy(body, strconv.Itoa(i))
			if err := in.WriteFile(ctx, name(i), body, 0o644); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	stageAndFold := func(round int, op func() error) time.Duration {
		for k := range changes {
			if err := w.WriteFile(ctx, name((round*changes+k)%files), []byte("round "+strconv.Itoa(round)), 0o644); err != nil {
				b.Fatal(err)
			}
		}
		t0 := time.Now()
		if err := op(); err != nil {
			b.Fatal(err)
		}
		d := time.Since(t0)
		if err := w.Fold(ctx); err != nil {
			b.Fatal(err)
		}
		return d
	}
	if err := w.Fold(ctx); err != nil {
		b.Fatal(err)
	}
	settle()
	var forks, cps []time.Duration
	round := 0
	for b.Loop() {
		forks = append(forks, stageAndFold(round, func() error {
			_, err := w.Fork(ctx, "fork-"+strconv.Itoa(round), forkspace.ForkOptions{})
			return err
		}))
		cps = append(cps, stageAndFold(round, func() error {
			_, err := w.Checkpoint(ctx, strconv.Itoa(round))
			return err
		}))
		round++
	}
	reportLatency(b, "fork", forks)
	reportLatency(b, "checkpoint", cps)
}

// reportLatency reports p50 and p99 of samples in milliseconds.
func reportLatency(b *testing.B, name string, samples []time.Duration) {
	slices.Sort(samples)
	pct := func(p float64) float64 { return float64(samples[int(p*float64(len(samples)-1))]) / 1e6 }
	b.ReportMetric(pct(0.50), name+"-p50-ms")
	b.ReportMetric(pct(0.99), name+"-p99-ms")
}
