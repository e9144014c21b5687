package forkspace_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/meta/sqlitemeta"
	"github.com/forkspace/forkspace/vfs"
)

// countNodes returns the number of stored tree nodes.
func countNodes(t *testing.T, m meta.Store) int {
	t.Helper()
	n := 0
	err := m.View(context.Background(), func(tx meta.Tx) error {
		return tx.Nodes(func(meta.ObjectInfo) error { n++; return nil })
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestForkAndCheckpointDoNotTouchTheTree tries to break invariant 3 (fork
// and checkpoint cost does not grow with the workspace): with changes
// staged on a large tree, a fork and a checkpoint must not fold them, write
// tree nodes, or move the source's head.
func TestForkAndCheckpointDoNotTouchTheTree(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	m, err := sqlitemeta.Open(ctx, dir+"/meta.db", sqlitemeta.Options{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := forkspace.Open(ctx, forkspace.Options{Dir: dir, Meta: m, FoldRows: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	w := mustCreate(t, st, "big")
	for i := range 2000 {
		write(t, w, fmt.Sprintf("d%02d/f%04d", i/100, i), fmt.Sprint("v1 ", i))
	}
	if err := w.Fold(ctx); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2000; i += 20 {
		write(t, w, fmt.Sprintf("d%02d/f%04d", i/100, i), fmt.Sprint("v2 ", i))
	}
	head := func() (root string, staged int) {
		err := m.View(ctx, func(tx meta.Tx) error {
			row, err := tx.Workspace(w.ID())
			if err != nil {
				return err
			}
			rows, err := tx.Staged(w.ID())
			root, staged = row.Root.String(), len(rows)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		return root, staged
	}
	root0, staged0 := head()
	if staged0 == 0 {
		t.Fatal("test setup: nothing staged")
	}
	nodes0 := countNodes(t, m)

	fork, err := w.Fork(ctx, "fork", forkspace.ForkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if n := countNodes(t, m); n != nodes0 {
		t.Fatalf("fork wrote %d tree nodes", n-nodes0)
	}
	if root, staged := head(); root != root0 || staged != staged0 {
		t.Fatalf("fork folded the source: root moved %v, staged rows %d -> %d", root != root0, staged0, staged)
	}
	if got := read(t, fork.FS, "d00/f0000"); got != "v2 0" {
		t.Fatalf("fork reads %q", got)
	}

	cp, err := w.Checkpoint(ctx, "cp")
	if err != nil {
		t.Fatal(err)
	}
	if root, staged := head(); root != root0 || staged != staged0 {
		t.Fatalf("checkpoint folded the source: root moved %v, staged rows %d -> %d", root != root0, staged0, staged)
	}

	// The background folder folds the checkpoint's delta into its own root
	// without changing what the checkpoint holds.
	deadline := time.Now().Add(30 * time.Second)
	for {
		var rows []meta.Staged
		err := m.View(ctx, func(tx meta.Tx) (err error) {
			rows, err = tx.CheckpointStaged(cp.ID)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("checkpoint never folded")
		}
		time.Sleep(10 * time.Millisecond)
	}
	write(t, w, "d00/f0000", "v3")
	view, err := w.At(ctx, "cp")
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 2000; i += 7 {
		want := fmt.Sprint("v1 ", i)
		if i%20 == 0 {
			want = fmt.Sprint("v2 ", i)
		}
		if got := read(t, view, fmt.Sprintf("d%02d/f%04d", i/100, i)); got != want {
			t.Fatalf("folded checkpoint reads %q for file %d, want %q", got, i, want)
		}
	}
	if err := w.Restore(ctx, "cp"); err != nil {
		t.Fatal(err)
	}
	if got := read(t, w.FS, "d00/f0000"); got != "v2 0" {
		t.Fatalf("restored workspace reads %q", got)
	}
}

// TestCheckpointStateBeforeFold reads, forks from and restores a
// checkpoint whose delta has not been folded yet (the store is reopened
// with the folder racing; the checks hold either way).
func TestCheckpointStateBeforeFold(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, t.TempDir())
	w := mustCreate(t, st, "w")
	write(t, w, "a", "1")
	if _, err := w.Checkpoint(ctx, "one"); err != nil {
		t.Fatal(err)
	}
	write(t, w, "a", "2")
	write(t, w, "b", "new")
	view, err := w.At(ctx, "one")
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, view, "a"); got != "1" {
		t.Fatalf("checkpoint reads %q", got)
	}
	f, err := w.Fork(ctx, "f", forkspace.ForkOptions{Checkpoint: "one"})
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, f.FS, "a"); got != "1" {
		t.Fatalf("fork of checkpoint reads %q", got)
	}
	changes, err := st.Diff(ctx, "w@one", "w", vfsDiffOptions())
	if err != nil || len(changes) != 2 {
		t.Fatalf("diff w@one w: %+v %v", changes, err)
	}
	if err := w.Restore(ctx, "one"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Stat(ctx, "b"); err == nil {
		t.Fatal("restore kept a file created after the checkpoint")
	}
}

func vfsDiffOptions() vfs.DiffOptions { return vfs.DiffOptions{} }

// TestDiffOfViewsWithDeltas diffs snapshots that still carry staging
// deltas directly with vfs.Diff: each side must be read with its delta.
func TestDiffOfViewsWithDeltas(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, t.TempDir())
	w := mustCreate(t, st, "w")
	write(t, w, "kept", "same")
	write(t, w, "changed", "before")
	before, err := st.Snapshot(ctx, "w") // the live head: root + staging rows
	if err != nil {
		t.Fatal(err)
	}
	write(t, w, "changed", "after")
	write(t, w, "added", "new")
	after, err := st.Snapshot(ctx, "w")
	if err != nil {
		t.Fatal(err)
	}
	changes, err := vfs.Diff(ctx, before, after, vfs.DiffOptions{})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]vfs.Op{}
	for _, c := range changes {
		got[c.Path] = c.Op
	}
	if len(got) != 2 || got["changed"] != vfs.Modified || got["added"] != vfs.Added {
		t.Fatalf("diff of two views = %+v", changes)
	}
	if got := read(t, before, "changed"); got != "before" {
		t.Fatalf("folding a view changed what it reads: %q", got)
	}
}
