package forkspace_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/internal/s3test"
	"github.com/forkspace/forkspace/vfs"
)

// BenchmarkPacks writes 10,000 files of 64 KiB (above the inline limit:
// one blob each) to a store on versitygw on loopback, with packs and with
// one object per blob, in one run, metadata in SQLite: in one batch (an
// import) and by 16 concurrent writers (a commit each); then reads them
// back after reopening the store, twice (cold, then through the disk
// cache). FORKSPACE_BENCH_S3_DELAY (a duration, "20ms") holds every
// request that long in a proxy first, as an endpoint far away would.
// docs/benchmarks.md:
//
//	go test -run '^$' -bench Packs -benchtime 1x -timeout 30m .
func BenchmarkPacks(b *testing.B) {
	const files, size = 10000, 64 << 10
	v := s3test.StartVersity(b, "bench")
	endpoint := v.Direct
	if d, err := time.ParseDuration(os.Getenv("FORKSPACE_BENCH_S3_DELAY")); err == nil {
		f := s3test.StartFaults(b, v.Direct)
		f.Delay(d)
		endpoint = f.URL
	}
	rng := rand.New(rand.NewPCG(5, 6))
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(rng.Uint32())
	}
	content := func(i int) []byte {
		d := append([]byte(nil), data...)
		d[0], d[1], d[2] = byte(i), byte(i>>8), 1 // distinct blobs
		return d
	}
	name := func(i int) string { return fmt.Sprintf("d%03d/f%05d", i/100, i) }
	prefix := 0
	for _, packs := range []bool{true, false} {
		for _, mode := range []string{"batch", "concurrent"} {
			kind := map[bool]string{true: "packs", false: "objects"}[packs]
			b.Run(mode+"/"+kind, func(b *testing.B) {
				for b.Loop() {
					prefix++
					dir := b.TempDir()
					open := func() *forkspace.Store {
						bs, err := versityBlobs(endpoint, "bench", fmt.Sprintf("packs-%d", prefix))
						if err != nil {
							b.Fatal(err)
						}
						st, err := forkspace.Open(context.Background(), forkspace.Options{Dir: dir, Blobs: bs, Packs: forkspace.PackOptions{Disable: !packs}})
						if err != nil {
							b.Fatal(err)
						}
						return st
					}
					ctx := context.Background()
					st := open()
					w, err := st.Create(ctx, "w", forkspace.CreateOptions{})
					if err != nil {
						b.Fatal(err)
					}
					for i := range files / 100 {
						if err := w.Mkdir(ctx, fmt.Sprintf("d%03d", i), 0o755); err != nil {
							b.Fatal(err)
						}
					}
					start := time.Now()
					switch mode {
					case "batch":
						err = w.Batch(ctx, func(fs *vfs.FS) error {
							for i := range files {
								if err := fs.WriteFile(ctx, name(i), content(i), 0o644); err != nil {
									return err
								}
							}
							return nil
						})
					case "concurrent":
						var wg sync.WaitGroup
						errs := make(chan error, 16)
						for g := range 16 {
							wg.Go(func() {
								for i := g; i < files; i += 16 {
									if err := w.WriteFile(ctx, name(i), content(i), 0o644); err != nil {
										errs <- err
										return
									}
								}
							})
						}
						wg.Wait()
						close(errs)
						err = <-errs
					}
					if err != nil {
						b.Fatal(err)
					}
					wrote := time.Since(start)
					objects := len(v.Keys(b, "bench", fmt.Sprintf("packs-%d/", prefix)))
					if err := st.Close(); err != nil {
						b.Fatal(err)
					}
					st = open()
					w, err = st.Workspace(ctx, "w")
					if err != nil {
						b.Fatal(err)
					}
					read := func() time.Duration {
						start := time.Now()
						for i := range files {
							if got, err := w.ReadFile(ctx, name(i)); err != nil || len(got) != size {
								b.Fatalf("read %d: %d bytes, %v", i, len(got), err)
							}
						}
						return time.Since(start)
					}
					cold, warm := read(), read()
					if err := st.Close(); err != nil {
						b.Fatal(err)
					}
					b.ReportMetric(files/wrote.Seconds(), "written-files/s")
					b.ReportMetric(float64(objects), "objects")
					b.ReportMetric(files/cold.Seconds(), "cold-read-files/s")
					b.ReportMetric(files/warm.Seconds(), "warm-read-files/s")
				}
			})
		}
	}
}
