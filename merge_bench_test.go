package forkspace_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/vfs"
)

// BenchmarkMerge merges a fork into its parent, both changed since the
// fork (100 files each, different files, some of them text files both
// changed on different lines), in a workspace of 100k files: the cost
// should follow the changes, not the workspace (goal: ≤ 50 ms).
//
//	go test -run '^$' -bench BenchmarkMerge -benchtime 20x .
func BenchmarkMerge(b *testing.B) {
	n := 100_000
	if testing.Short() {
		n = 10_000
	}
	ctx := context.Background()
	st := benchStore(b)
	base := textFiles(b, st, n)
	change := func(w *forkspace.Workspace, round, side int) {
		// 100 files a side: 90 only this side changes, 10 both sides
		// change (line 1 on one side, line 5 on the other).
		for k := range 100 {
			i := (round*1000 + k*97 + side*n/2) % n
			text := fmt.Sprintf("file %d\nline 2\nline 3\nline 4\nline 5 by %d\n", i, side)
			if k < 10 {
				i = (round*1000 + k*97) % n
				text = fmt.Sprintf("file %d\nline 2\nline 3\nline 4\nline 5\n", i)
				if side == 1 {
					text = fmt.Sprintf("file %d changed\nline 2\nline 3\nline 4\nline 5\n", i)
				} else {
					text = fmt.Sprintf("file %d\nline 2\nline 3\nline 4\nline 5 changed\n", i)
				}
			}
			if err := w.WriteFile(ctx, fmt.Sprintf("d%04d/f%06d", i/100, i), []byte(text), 0o644); err != nil {
				b.Fatal(err)
			}
		}
	}
	var took []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		ours, err := base.Fork(ctx, fmt.Sprintf("ours%d", i), forkspace.ForkOptions{})
		if err != nil {
			b.Fatal(err)
		}
		theirs, err := ours.Fork(ctx, fmt.Sprintf("theirs%d", i), forkspace.ForkOptions{})
		if err != nil {
			b.Fatal(err)
		}
		change(ours, i, 0)
		change(theirs, i, 1)
		b.StartTimer()
		start := time.Now()
		r, err := ours.Merge(ctx, theirs.Name(), forkspace.MergeOptions{})
		if err != nil {
			b.Fatal(err)
		}
		took = append(took, time.Since(start))
		b.StopTimer()
		if len(r.Conflicts) != 0 || len(r.Changed) != 100 {
			b.Fatalf("merge: %d changed, %d conflicts", len(r.Changed), len(r.Conflicts))
		}
		b.StartTimer()
	}
	b.StopTimer()
	reportLatency(b, "merge", took)
}

// textFiles creates workspace "base" holding n small text files (five
// lines each), 100 to a directory, folded.
func textFiles(b *testing.B, st *forkspace.Store, n int) *forkspace.Workspace {
	b.Helper()
	ctx := context.Background()
	base, err := st.Create(ctx, "base", forkspace.CreateOptions{})
	if err != nil {
		b.Fatal(err)
	}
	for d := range n / 100 {
		err := base.Batch(ctx, func(f *vfs.FS) error {
			dir := fmt.Sprintf("d%04d", d)
			if err := f.Mkdir(ctx, dir, 0o755); err != nil {
				return err
			}
			for i := range 100 {
				text := fmt.Sprintf("file %d\nline 2\nline 3\nline 4\nline 5\n", d*100+i)
				if err := f.WriteFile(ctx, fmt.Sprintf("%s/f%06d", dir, d*100+i), []byte(text), 0o644); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			b.Fatal(err)
		}
	}
	if err := base.Fold(ctx); err != nil {
		b.Fatal(err)
	}
	return base
}
