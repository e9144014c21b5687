package forkspace_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/gc"
	"github.com/forkspace/forkspace/meta"
)

// collectLoop collects garbage without grace in a loop until the returned
// function is called (which waits for the last collection).
func collectLoop(t *testing.T, st *forkspace.Store) (stop func()) {
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-done:
				return
			default:
			}
			if _, err := st.GC(context.Background(), forkspace.GCOptions{Grace: gc.NoGrace}); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	return func() { close(done); wg.Wait() }
}

func collect(t *testing.T, st *forkspace.Store) gc.Counts {
	t.Helper()
	r, err := st.GC(context.Background(), forkspace.GCOptions{Grace: gc.NoGrace})
	if err != nil {
		t.Fatal(err)
	}
	return r.Reclaimed
}

// TestGCKeepsMergeBasesAndConflictVersions collects garbage at the points
// where a merge base or a conflict's version is reachable only through the
// hidden checkpoints that keep them: the fork's base after both sides
// rewrote the file, ours' version after the workspace overwrote it and the
// checkpoint before the merge was deleted, theirs' version after theirs
// was deleted.
func TestGCKeepsMergeBasesAndConflictVersions(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, t.TempDir())
	big := strings.Repeat("base line\n", 4000) // 40 KB: stored as a blob, not inline
	p := mustCreate(t, st, "p")
	write(t, p, "f", big)
	write(t, p, "g", "g")
	c := mustFork(t, p, "c")
	write(t, p, "f", "ours\n")
	write(t, c, "f", "theirs\n")
	write(t, c, "g", "g2")
	collect(t, st)
	base, err := st.MergeBase(ctx, "p", "c")
	if err != nil {
		t.Fatal(err)
	}
	if got := read(t, snapshot(t, st, base), "f"); got != big {
		t.Fatalf("merge base after gc reads %d bytes", len(got))
	}
	r := mustMerge(t, p, "c", forkspace.MergeOptions{})
	if len(r.Conflicts) != 1 || r.Conflicts[0].Path != "f" {
		t.Fatalf("conflicts: %+v", r.Conflicts)
	}
	write(t, p, "f", "edited after the merge\n")
	if err := p.DeleteCheckpoint(ctx, r.Checkpoint); err != nil {
		t.Fatal(err)
	}
	if err := st.Delete(ctx, "c"); err != nil {
		t.Fatal(err)
	}
	collect(t, st)
	if err := p.Resolve(ctx, "f", forkspace.Resolution{Take: forkspace.TakeMarkers}); err != nil {
		t.Fatal(err)
	}
	got := read(t, p.FS, "f")
	if !strings.Contains(got, "<<<<<<< p\nours\n") || !strings.Contains(got, "=======\ntheirs\n>>>>>>> theirs\n") || !strings.Contains(got, "||||||| base\nbase line\n") {
		t.Fatalf("markers after gc:\n%.300s", got)
	}
	if rep, err := st.Check(ctx); err != nil || !rep.Clean() {
		t.Fatalf("check: %+v, %v", rep, err)
	}
	// The last conflict resolved, the versions go: the next collection
	// reclaims the base's blob.
	if n := collect(t, st); n.Blobs == 0 {
		t.Fatalf("nothing reclaimed after the conflicts were resolved: %+v", n)
	}
}

// TestGCInterleavedWithMerges collects garbage without grace in a loop
// while workspaces fork, change and merge, then checks the store and that
// every merge saw its base.
func TestGCInterleavedWithMerges(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, t.TempDir())
	p := mustCreate(t, st, "p")
	write(t, p, "shared", strings.Repeat("x\n", 10000))
	stop := collectLoop(t, st)
	for i := range 15 {
		f := mustFork(t, p, fmt.Sprintf("f%d", i))
		write(t, f, fmt.Sprintf("from-%d", i), strings.Repeat(fmt.Sprintf("%d\n", i), 5000))
		write(t, p, "shared", strings.Repeat("x\n", 10000)+fmt.Sprint(i, "\n"))
		write(t, f, "shared", fmt.Sprint(i, "\n")+strings.Repeat("x\n", 10000))
		r := mustMerge(t, p, f.Name(), forkspace.MergeOptions{})
		if len(r.Conflicts) != 0 {
			t.Fatalf("merge %d: %+v", i, r.Conflicts)
		}
		if err := st.Delete(ctx, f.Name()); err != nil {
			t.Fatal(err)
		}
		want := fmt.Sprint(i, "\n") + strings.Repeat("x\n", 10000) + fmt.Sprint(i, "\n")
		if got := read(t, p.FS, "shared"); got != want {
			t.Fatalf("merge %d: shared is %d bytes, want %d", i, len(got), len(want))
		}
		write(t, p, "shared", strings.Repeat("x\n", 10000))
	}
	stop()
	if rep, err := st.Check(ctx); err != nil || !rep.Clean() {
		t.Fatalf("check: %+v, %v", rep, err)
	}
}

// TestMergeBaseOfOldFork: a fork made before forks recorded their base
// (simulated by dropping the base row) gets a typed error naming it, not
// a guessed base.
func TestMergeBaseOfOldFork(t *testing.T) {
	ctx := context.Background()
	st, m := openWithMeta(t)
	p := mustCreate(t, st, "p")
	c := mustFork(t, p, "old-fork")
	err := m.Update(ctx, func(tx meta.Tx) error {
		cps, err := tx.Checkpoints(c.ID())
		for _, cp := range cps {
			if err == nil && cp.Kind == meta.CheckpointBase {
				err = tx.DeleteCheckpoint(cp.ID)
			}
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Merge(ctx, "old-fork", forkspace.MergeOptions{})
	if !errors.Is(err, forkspace.ErrNoMergeBase) || !strings.Contains(err.Error(), "fork old-fork records no base") {
		t.Fatalf("merge of an old fork: %v", err)
	}
	// With a base named, the merge goes ahead.
	write(t, c, "new", "n")
	if _, err := p.Merge(ctx, "old-fork", forkspace.MergeOptions{Base: "p"}); err != nil {
		t.Fatal(err)
	}
}
