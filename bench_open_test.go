package forkspace_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"

	"github.com/forkspace/forkspace"
)

// Benchmarks of goal 5 of issue 9, "nothing grows with what it does not
// touch": what a CLI call pays before and for its first command. Each
// sample opens the store afresh, as every CLI call does. Results and the
// commands are in docs/benchmarks.md.
//
//	go test -run '^$' -bench 'OpenStore|ListWorkspaces' -timeout 30m .

// quietLog drops the migration notices of new stores.
var quietLog = slog.New(slog.NewTextHandler(io.Discard, nil))

// closedStore builds a store with build and closes it, returning its
// directory.
func closedStore(b *testing.B, build func(st *forkspace.Store)) string {
	b.Helper()
	dir := b.TempDir()
	st, err := forkspace.Open(context.Background(), forkspace.Options{Dir: dir, Logger: quietLog})
	if err != nil {
		b.Fatal(err)
	}
	build(st)
	if err := st.Close(); err != nil {
		b.Fatal(err)
	}
	return dir
}

// writeSmall writes n files of 1 KiB (inline bodies, 100 per directory)
// into w in batches, and folds.
func writeSmall(b *testing.B, w *forkspace.Workspace, n int) {
	b.Helper()
	ctx := context.Background()
	data := make([]byte, 1<<10)
	for i := range n {
		dir := fmt.Sprintf("d%04d", i/100)
		if i%100 == 0 {
			if err := w.Mkdir(ctx, dir, 0o755); err != nil {
				b.Fatal(err)
			}
		}
		copy(data, fmt.Sprintf("file %d ", i)) // distinct bodies
		if err := w.WriteFile(ctx, fmt.Sprintf("%s/f%06d", dir, i), data, 0o644); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Fold(ctx); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkOpenStore measures opening a closed store of 1k/10k/100k files
// (1 KiB each, in metadata), looking up a workspace and reading one file:
// the fixed cost of every CLI call.
func BenchmarkOpenStore(b *testing.B) {
	for _, n := range []int{1_000, 10_000, 100_000} {
		b.Run(fmt.Sprintf("files=%d", n), func(b *testing.B) {
			ctx := context.Background()
			dir := closedStore(b, func(st *forkspace.Store) {
				w, err := st.Create(ctx, "base", forkspace.CreateOptions{})
				if err != nil {
					b.Fatal(err)
				}
				writeSmall(b, w, n)
			})
			for b.Loop() {
				st, err := forkspace.Open(ctx, forkspace.Options{Dir: dir, Logger: quietLog})
				if err != nil {
					b.Fatal(err)
				}
				w, err := st.Workspace(ctx, "base")
				if err != nil {
					b.Fatal(err)
				}
				if _, err := w.ReadFile(ctx, "d0000/f000000"); err != nil {
					b.Fatal(err)
				}
				if err := st.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkListWorkspaces measures opening a closed store and listing
// 10/100/1,000 workspaces: forks of a 1,000-file workspace, each with 20
// files rewritten and left in its staging delta.
func BenchmarkListWorkspaces(b *testing.B) {
	for _, n := range []int{10, 100, 1_000} {
		b.Run(fmt.Sprintf("workspaces=%d", n), func(b *testing.B) {
			ctx := context.Background()
			dir := closedStore(b, func(st *forkspace.Store) {
				base, err := st.Create(ctx, "base", forkspace.CreateOptions{})
				if err != nil {
					b.Fatal(err)
				}
				writeSmall(b, base, 1_000)
				for i := range n - 1 {
					f, err := base.Fork(ctx, fmt.Sprintf("fork%04d", i), forkspace.ForkOptions{})
					if err != nil {
						b.Fatal(err)
					}
					for j := range 20 {
						k := (j*50 + i) % 1_000
						name := fmt.Sprintf("d%04d/f%06d", k/100, k)
						if err := f.WriteFile(ctx, name, []byte(name), 0o644); err != nil {
							b.Fatal(err)
						}
					}
				}
			})
			for b.Loop() {
				st, err := forkspace.Open(ctx, forkspace.Options{Dir: dir, Logger: quietLog})
				if err != nil {
					b.Fatal(err)
				}
				infos, err := st.List(ctx)
				if err != nil || len(infos) != n {
					b.Fatalf("list: %d workspaces, %v", len(infos), err)
				}
				if err := st.Close(); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
