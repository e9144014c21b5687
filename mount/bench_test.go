package mount_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/forkspace/forkspace/mount"
	"github.com/forkspace/forkspace/mount/mounttest"
)

// BenchmarkWriteBackBurst: 50 writes to one path, then Flush; the goal is
// one put per burst.
func BenchmarkWriteBackBurst(b *testing.B) {
	src := newSource(map[string]string{"manifest.json": "{}"})
	s := mounttest.NewStore(b)
	f := s.Create("ws")
	m := s.Attach(f, "ws", []mount.Spec{rwSpec(src, mount.Manual, 0)}, nil)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		for j := range 50 {
			ok(b, f.WriteFile(ctx, "data/manifest.json", []byte(fmt.Sprintf("%d-%d", i, j)), 0o644))
		}
		ok(b, m.Flush(ctx, ""))
	}
	b.ReportMetric(float64(src.puts.Load())/float64(b.N), "puts/burst")
}

// BenchmarkReadAfterHydration: reads of a hydrated 64 KiB file; the goal
// is zero requests per read.
func BenchmarkReadAfterHydration(b *testing.B) {
	src := newSource(map[string]string{"f": strings.Repeat("x", 64<<10)})
	s := mounttest.NewStore(b)
	f := s.Create("ws")
	s.Attach(f, "ws", []mount.Spec{{Root: "/data", Mount: src}}, nil)
	if _, err := f.ReadFile(ctx, "data/f"); err != nil {
		b.Fatal(err)
	}
	before := src.fetches.Load()
	b.SetBytes(64 << 10)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.ReadFile(ctx, "data/f"); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(src.fetches.Load()-before)/float64(b.N), "requests/read")
}

// BenchmarkPrefetch hydrates 256 files of 16 KiB each per iteration.
func BenchmarkPrefetch(b *testing.B) {
	const n, size = 256, 16 << 10
	files := map[string]string{}
	for i := range n {
		files[fmt.Sprintf("d%02d/f%03d", i%16, i)] = strings.Repeat(string(rune('a'+i%26)), size-8) + fmt.Sprintf("%08d", i)
	}
	b.SetBytes(n * size)
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		s := mounttest.NewStore(b)
		f := s.Create("ws")
		m := s.Attach(f, "ws", []mount.Spec{{Root: "/data", Mount: newSource(files)}}, nil)
		ok(b, m.Index(ctx))
		b.StartTimer()
		ok(b, m.Prefetch(ctx, ""))
	}
}

// BenchmarkIndex10k lists and stubs a 10,000-entry lazy mount (one
// mutation).
func BenchmarkIndex10k(b *testing.B) {
	files := map[string]string{}
	for i := range 10000 {
		files[fmt.Sprintf("prefix/d%03d/obj%05d.json", i%100, i)] = "0123456789"
	}
	src := newSource(files)
	b.ReportAllocs()
	for b.Loop() {
		b.StopTimer()
		s := mounttest.NewStore(b)
		f := s.Create("ws")
		m := s.Attach(f, "ws", []mount.Spec{{Root: "/data", Mount: src}}, nil)
		b.StartTimer()
		ok(b, m.Index(ctx))
	}
}
