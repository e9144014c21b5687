package forkspace_test

import (
	"context"
	"log/slog"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/gc"
	"github.com/forkspace/forkspace/internal/benchtree"
	"github.com/forkspace/forkspace/internal/pgtest"
	"github.com/forkspace/forkspace/internal/s3test"
	"github.com/forkspace/forkspace/meta/pgmeta"
	"github.com/forkspace/forkspace/transfer"
)

// BenchmarkGCPlanStores times the plan of a collection (a dry run) of the
// same store on the embedded drivers (SQLite, a blob directory) and on
// PostgreSQL + S3 (versitygw on loopback, packs), in one run: one
// workspace of FORKSPACE_BENCH_GC_FILES files (default 10,000; one in 50
// of 64 KiB, the rest of 1 KiB, every file a blob: the store inlines 512
// bytes at most) imported from a tar stream, collected once before the
// plans are timed. It reports the objects the plan reached and the
// import's time. docs/benchmarks.md:
//
//	FORKSPACE_BENCH_GC_FILES=1000000 go test -run '^$' -bench GCPlanStores -benchtime 3x -timeout 120m .
func BenchmarkGCPlanStores(b *testing.B) {
	files := 10_000
	if v, err := strconv.Atoi(os.Getenv("FORKSPACE_BENCH_GC_FILES")); err == nil && v > 0 {
		files = v
	}
	quiet := slog.New(slog.DiscardHandler)
	stores := []struct {
		name string
		opts func(b *testing.B) forkspace.Options
	}{
		{"local", func(*testing.B) forkspace.Options { return forkspace.Options{} }},
		{"postgres+s3", func(b *testing.B) forkspace.Options {
			m, err := pgmeta.Open(context.Background(), pgtest.DB(b), pgmeta.Options{Exclusive: true, Logger: quiet})
			if err != nil {
				b.Fatal(err)
			}
			bs, err := versityBlobs(s3test.StartVersity(b, "bench").Direct, "bench", "gc")
			if err != nil {
				b.Fatal(err)
			}
			return forkspace.Options{Meta: m, Blobs: bs}
		}},
	}
	for _, sd := range stores {
		b.Run(sd.name, func(b *testing.B) {
			ctx := context.Background()
			o := sd.opts(b)
			o.Dir, o.InlineMax, o.Logger = b.TempDir(), 512, quiet
			st, err := forkspace.Open(ctx, o)
			if err != nil {
				b.Fatal(err)
			}
			defer st.Close()
			w := mustCreate(b, st, "base")
			start := time.Now()
			if err := transfer.ImportTar(ctx, w.FS, "/", benchtree.Tar(files), transfer.Options{}); err != nil {
				b.Fatal(err)
			}
			imported := time.Since(start)
			if _, err := st.GC(ctx, forkspace.GCOptions{Grace: gc.NoGrace}); err != nil {
				b.Fatal(err)
			}
			var r forkspace.GCReport
			for b.Loop() {
				if r, err = st.GC(ctx, forkspace.GCOptions{DryRun: true}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(r.Plan.Reachable.Objects()), "objects")
			b.ReportMetric(imported.Seconds(), "import-s")
		})
	}
}
