package vfs_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/forkspace/forkspace/vfs"
)

// BenchmarkCreate measures WriteFile of new small files (one metadata
// transaction each) into a directory of 100 subdirectories.
func BenchmarkCreate(b *testing.B) {
	for _, size := range []int{0, 100} {
		b.Run(fmt.Sprintf("%dB", size), func(b *testing.B) {
			ctx := context.Background()
			e := newEnv(b, vfs.Options{})
			f := e.open(e.ws)
			for i := range 100 {
				must(b, f.Mkdir(ctx, fmt.Sprintf("d%d", i), 0o755))
			}
			data := pattern(size)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				must(b, f.WriteFile(ctx, fmt.Sprintf("d%d/f%d", i%100, i), data, 0o644))
				i++
			}
			b.ReportMetric(float64(i)/b.Elapsed().Seconds(), "creates/s")
		})
	}
}

// BenchmarkCreateParallel measures creates from 8 goroutines per core,
// which the FS groups into shared transactions.
func BenchmarkCreateParallel(b *testing.B) {
	ctx := context.Background()
	e := newEnv(b, vfs.Options{})
	f := e.open(e.ws)
	b.ReportAllocs()
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		dir := fmt.Sprintf("p%p", pb)
		must(b, f.Mkdir(ctx, dir, 0o755))
		i := 0
		for pb.Next() {
			must(b, f.WriteFile(ctx, fmt.Sprintf("%s/f%d", dir, i), nil, 0o644))
			i++
		}
	})
}

// benchTree returns an FS with n files in a/b/c, staged or folded.
func benchTree(b *testing.B, n int, fold bool) *vfs.FS {
	ctx := context.Background()
	e := newEnv(b, vfs.Options{FoldRows: -1})
	f := e.open(e.ws)
	must(b, f.MkdirAll(ctx, "a/b/c", 0o755))
	for i := range n {
		must(b, f.WriteFile(ctx, fmt.Sprintf("a/b/c/f%04d", i), []byte("x"), 0o644))
	}
	if fold {
		must(b, f.Fold(ctx))
	}
	return f
}

// BenchmarkStat measures Stat of a file three directories deep, with the
// state in the overlay (staged) and in the tree (folded).
func BenchmarkStat(b *testing.B) {
	for _, fold := range []bool{false, true} {
		b.Run(map[bool]string{false: "staged", true: "folded"}[fold], func(b *testing.B) {
			ctx := context.Background()
			f := benchTree(b, 1000, fold)
			names := make([]string, 1000)
			for i := range names {
				names[i] = fmt.Sprintf("a/b/c/f%04d", i)
			}
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, err := f.Stat(ctx, names[i%len(names)]); err != nil {
					b.Fatal(err)
				}
				i++
			}
			b.ReportMetric(float64(i)/b.Elapsed().Seconds(), "stats/s")
		})
	}
}

// BenchmarkStatParallel measures Stat from all cores.
func BenchmarkStatParallel(b *testing.B) {
	ctx := context.Background()
	f := benchTree(b, 1000, true)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			if _, err := f.Stat(ctx, fmt.Sprintf("a/b/c/f%04d", i%1000)); err != nil {
				b.Fatal(err)
			}
			i++
		}
	})
}

// BenchmarkReadDir measures listing a directory of 1,000 entries.
func BenchmarkReadDir(b *testing.B) {
	for _, fold := range []bool{false, true} {
		b.Run(map[bool]string{false: "staged", true: "folded"}[fold], func(b *testing.B) {
			ctx := context.Background()
			f := benchTree(b, 1000, fold)
			b.ReportAllocs()
			for b.Loop() {
				ents, err := f.ReadDir(ctx, "a/b/c")
				if err != nil || len(ents) != 1000 {
					b.Fatal(len(ents), err)
				}
			}
		})
	}
}

// BenchmarkReadFile measures reading a 4 MiB file.
func BenchmarkReadFile(b *testing.B) {
	ctx := context.Background()
	e := newEnv(b, vfs.Options{})
	f := e.open(e.ws)
	data := pattern(4 << 20)
	must(b, f.WriteFile(ctx, "big", data, 0o644))
	b.SetBytes(int64(len(data)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := f.ReadFile(ctx, "big"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFold measures folding 4,096 staged creates into the tree.
func BenchmarkFold(b *testing.B) {
	ctx := context.Background()
	e := newEnv(b, vfs.Options{FoldRows: -1})
	f := e.open(e.ws)
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		b.StopTimer()
		for range 1024 {
			must(b, f.WriteFile(ctx, fmt.Sprintf("f%d", n), nil, 0o644))
			n++
		}
		b.StartTimer()
		must(b, f.Fold(ctx))
	}
}
