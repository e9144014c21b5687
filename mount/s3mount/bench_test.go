package s3mount_test

import (
	"fmt"
	"testing"

	"github.com/forkspace/forkspace/internal/s3test"
	"github.com/forkspace/forkspace/mount"
	"github.com/forkspace/forkspace/mount/mounttest"
	"github.com/forkspace/forkspace/vfs"
)

// benchObjects is the size of the benchmarked prefix.
const benchObjects = 10_000

// seeded starts a server holding benchObjects 1 KiB objects under "p/".
func seeded(b *testing.B) *s3test.Server {
	srv := s3test.Start(b, bucket)
	data := make([]byte, 1024)
	for i := range benchObjects {
		srv.Seed(b, bucket, fmt.Sprintf("p/d%02d/f%05d.txt", i%100, i), data)
	}
	return srv
}

// BenchmarkIndex10k lists a 10k-object prefix (10 pages of 1000).
func BenchmarkIndex10k(b *testing.B) {
	srv := seeded(b)
	m := open(b, options(srv, "p"))
	b.ReportAllocs()
	for b.Loop() {
		entries, err := m.List(b.Context())
		if err != nil || len(entries) != benchObjects {
			b.Fatalf("list: %d entries, %v", len(entries), err)
		}
	}
	b.ReportMetric(float64(srv.Count("GET", "/"+bucket))/float64(b.N), "lists/op")
}

// BenchmarkFirstRead10k fetches one 1 KiB object of a 10k-object prefix.
func BenchmarkFirstRead10k(b *testing.B) {
	srv := seeded(b)
	m := open(b, options(srv, "p"))
	b.SetBytes(1024)
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := m.Fetch(b.Context(), fmt.Sprintf("d%02d/f%05d.txt", i%100, i%benchObjects)); err != nil {
			b.Fatalf("fetch: %v", err)
		}
		i++
	}
	b.ReportMetric(float64(srv.Total())/float64(b.N), "requests/op")
}

// BenchmarkWorkspace10k runs the mount in a real workspace over the
// 10k-object prefix: index (the LISTs and the stubs landing in the
// store), first read of a stub (fetch, store, promote) and a read after
// hydration, with the requests each costs at the server.
func BenchmarkWorkspace10k(b *testing.B) {
	srv := seeded(b)
	b.Setenv("AWS_ACCESS_KEY_ID", s3test.AccessKey)
	b.Setenv("AWS_SECRET_ACCESS_KEY", s3test.SecretKey)
	store := mounttest.NewStore(b)
	attach := func(id string) (*vfs.FS, *mount.Manager) {
		f := store.Create(id)
		return f, store.Attach(f, id, []mount.Spec{workspaceSpec(b, srv, "")}, nil)
	}
	file := func(i int) string { return fmt.Sprintf("data/d%02d/f%05d.txt", i%100, i) }
	// Sub-benchmarks run again with -count: the workspaces and the stubs
	// to read are numbered across runs.
	workspaces, stubs := 0, 0

	b.Run("index", func(b *testing.B) {
		srv.Reset()
		for b.Loop() {
			b.StopTimer()
			_, mgr := attach(fmt.Sprintf("index-%d", workspaces))
			workspaces++
			b.StartTimer()
			if err := mgr.Index(b.Context()); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(srv.Total())/float64(b.N), "requests/op")
	})
	f, mgr := attach("read")
	if err := mgr.Index(b.Context()); err != nil {
		b.Fatal(err)
	}
	b.Run("first-read", func(b *testing.B) {
		srv.Reset()
		b.SetBytes(1024)
		b.ReportAllocs()
		for b.Loop() {
			if stubs == benchObjects-1 {
				b.Fatalf("all %d stubs read", stubs)
			}
			if _, err := f.ReadFile(b.Context(), file(stubs)); err != nil {
				b.Fatal(err)
			}
			stubs++
		}
		b.ReportMetric(float64(srv.Total())/float64(b.N), "requests/op")
	})
	b.Run("hydrated-read", func(b *testing.B) {
		if _, err := f.ReadFile(b.Context(), file(benchObjects-1)); err != nil {
			b.Fatal(err)
		}
		srv.Reset()
		b.SetBytes(1024)
		b.ReportAllocs()
		for b.Loop() {
			if _, err := f.ReadFile(b.Context(), file(benchObjects-1)); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(srv.Total())/float64(b.N), "requests/op")
	})
}
