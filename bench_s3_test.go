package forkspace_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"testing"
	"time"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/blob"
	"github.com/forkspace/forkspace/internal/s3test"
)

// BenchmarkBlobStores writes and reads the same workloads through a store
// whose blobs are in a local directory (fileblob) and one whose blobs are
// in versitygw on loopback (s3blob), in one run, metadata in SQLite for
// both: 10,000 files of 24 KiB (above the 16 KiB inline limit, so one
// blob each: the known slow case on S3 that packs answer) and one large
// file (1 GiB; FORKSPACE_BENCH_LARGE_MIB overrides). docs/benchmarks.md:
//
//	go test -run '^$' -bench BlobStores -benchtime 1x -timeout 30m .
func BenchmarkBlobStores(b *testing.B) {
	largeMiB := 1024
	if v := os.Getenv("FORKSPACE_BENCH_LARGE_MIB"); v != "" {
		fmt.Sscan(v, &largeMiB)
	}
	v := s3test.StartVersity(b, "bench")
	n := 0
	stores := []struct {
		name  string
		blobs func(b *testing.B) blob.Store
	}{
		{"file", func(*testing.B) blob.Store { return nil }},
		{"s3", func(b *testing.B) blob.Store {
			n++
			s, err := versityBlobs(v.Direct, "bench", fmt.Sprintf("run-%d", n))
			if err != nil {
				b.Fatal(err)
			}
			return s
		}},
	}
	open := func(b *testing.B, blobs blob.Store) *forkspace.Workspace {
		st, err := forkspace.Open(context.Background(), forkspace.Options{Dir: b.TempDir(), Blobs: blobs})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { st.Close() })
		w, err := st.Create(context.Background(), "w", forkspace.CreateOptions{})
		if err != nil {
			b.Fatal(err)
		}
		return w
	}
	rng := rand.New(rand.NewPCG(3, 4))
	small := make([]byte, 24<<10)
	for i := range small {
		small[i] = byte(rng.Uint32())
	}
	large := make([]byte, largeMiB<<20)
	for i := 0; i < len(large); i += 8 {
		x := rng.Uint64()
		for j := range 8 {
			large[i+j] = byte(x >> (8 * j))
		}
	}
	for _, s := range stores {
		b.Run("small/"+s.name, func(b *testing.B) {
			const files = 10000
			ctx := context.Background()
			for b.Loop() {
				w := open(b, s.blobs(b))
				start := time.Now()
				for i := range files {
					if i%100 == 0 {
						if err := w.Mkdir(ctx, fmt.Sprintf("d%03d", i/100), 0o755); err != nil {
							b.Fatal(err)
						}
					}
					small[0], small[1] = byte(i), byte(i>>8) // distinct blobs
					if err := w.WriteFile(ctx, fmt.Sprintf("d%03d/f%05d", i/100, i), small, 0o644); err != nil {
						b.Fatal(err)
					}
				}
				wrote := time.Since(start)
				start = time.Now()
				for i := range files {
					if got, err := w.ReadFile(ctx, fmt.Sprintf("d%03d/f%05d", i/100, i)); err != nil || len(got) != len(small) {
						b.Fatalf("read %d: %d bytes, %v", i, len(got), err)
					}
				}
				read := time.Since(start)
				b.ReportMetric(files/wrote.Seconds(), "written-files/s")
				b.ReportMetric(files/read.Seconds(), "read-files/s")
			}
		})
		b.Run(fmt.Sprintf("large-%dMiB/%s", largeMiB, s.name), func(b *testing.B) {
			ctx := context.Background()
			for b.Loop() {
				w := open(b, s.blobs(b))
				start := time.Now()
				if err := w.WriteFile(ctx, "big", large, 0o644); err != nil {
					b.Fatal(err)
				}
				wrote := time.Since(start)
				start = time.Now()
				got, err := w.ReadFile(ctx, "big")
				if err != nil || len(got) != len(large) {
					b.Fatalf("read: %d bytes, %v", len(got), err)
				}
				read := time.Since(start)
				mb := float64(len(large)) / 1e6
				b.ReportMetric(mb/wrote.Seconds(), "write-MB/s")
				b.ReportMetric(mb/read.Seconds(), "read-MB/s")
			}
		})
	}
}
