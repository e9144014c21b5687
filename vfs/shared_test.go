package vfs_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/vfs"
)

// TestSharedWritersConverge opens one workspace twice with Options.Shared,
// as two processes sharing a store do, and writes through both: a writer
// whose mirror is out of date recomputes its mutation on the current head
// instead of overwriting the other's, so every write lands, and each FS
// serves the other's after CatchUp.
func TestSharedWritersConverge(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, vfs.Options{Shared: true, FoldRows: 64})
	a, b := e.open(e.ws), e.open(e.ws)
	must(t, a.Mkdir(ctx, "d", 0o755))
	// b has not seen d: its mkdir of d/x must fail to find d only if it
	// did not reload; it reloads and succeeds.
	must(t, b.WriteFile(ctx, "d/from-b", []byte("b"), 0o644))
	must(t, a.WriteFile(ctx, "d/from-a", []byte("a"), 0o644))
	if _, err := b.Stat(ctx, "d/from-a"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("b sees a's write before it refreshed (err %v): the test is not racing two mirrors", err)
	}
	must(t, b.CatchUp(ctx))
	for _, f := range []*vfs.FS{a, b} {
		must(t, f.CatchUp(ctx))
		got := entryNames(t, f, "d")
		if want := []string{"from-a", "from-b"}; !slices.Equal(got, want) {
			t.Errorf("d holds %q, want %q", got, want)
		}
	}

	// Many writers on both, past the fold threshold: every file lands
	// once, whichever FS wrote it, and both agree afterwards.
	const perWriter = 60
	var wg sync.WaitGroup
	for i, f := range []*vfs.FS{a, b, a, b} {
		wg.Go(func() {
			for j := range perWriter {
				if err := f.WriteFile(ctx, fmt.Sprintf("d/w%d-%03d", i, j), []byte{byte(j)}, 0o644); err != nil {
					t.Errorf("writer %d: %v", i, err)
					return
				}
			}
		})
	}
	wg.Wait()
	for _, f := range []*vfs.FS{a, b} {
		must(t, f.CatchUp(ctx))
		if got := len(entryNames(t, f, "d")); got != 2+4*perWriter {
			t.Errorf("d holds %d entries, want %d", got, 2+4*perWriter)
		}
	}
	if a.HeadGen() != b.HeadGen() {
		t.Errorf("after CatchUp the two mirror generations %d and %d", a.HeadGen(), b.HeadGen())
	}
	// A third opening, as a process starting now, reads the same.
	c := e.open(e.ws)
	if got := len(entryNames(t, c, "d")); got != 2+4*perWriter {
		t.Errorf("a fresh open sees %d entries, want %d", got, 2+4*perWriter)
	}
}

// TestSharedFoldThenStaleWrite folds on one FS and writes through the
// other, whose mirror still has the replaced root and staging rows: the
// write reloads and lands on the folded head, and nothing the fold kept
// is lost.
func TestSharedFoldThenStaleWrite(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, vfs.Options{Shared: true, FoldRows: -1})
	a, b := e.open(e.ws), e.open(e.ws)
	for i := range 10 {
		must(t, a.WriteFile(ctx, fmt.Sprintf("f%d", i), []byte("x"), 0o644))
	}
	must(t, a.Fold(ctx))
	must(t, b.Remove(ctx, "f3")) // b's mirror does not have f3: it reloads
	must(t, a.CatchUp(ctx))
	got := entryNames(t, a, ".")
	want := []string{"f0", "f1", "f2", "f4", "f5", "f6", "f7", "f8", "f9"}
	if !slices.Equal(got, want) {
		t.Errorf("after the fold and b's remove: %q, want %q", got, want)
	}
	// A fold computed on a mirror that went out of date commits nothing.
	must(t, b.WriteFile(ctx, "late", []byte("y"), 0o644))
	err := a.Fold(ctx)
	if err != nil && !errors.Is(err, meta.ErrHeadMoved) {
		t.Fatalf("fold on an out-of-date mirror: %v", err)
	}
	must(t, a.CatchUp(ctx))
	if _, err := a.Stat(ctx, "late"); err != nil {
		t.Errorf("b's write after a's stale fold: %v", err)
	}
}

// TestSharedDeleted: a workspace another process deleted refreshes to
// fs.ErrNotExist, and a write fails the same way rather than landing.
func TestSharedDeleted(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, vfs.Options{Shared: true})
	a := e.open(e.ws)
	must(t, a.WriteFile(ctx, "x", []byte("x"), 0o644))
	must(t, e.deps.Meta.Update(ctx, func(tx meta.Tx) error { return tx.DeleteWorkspace(e.ws.ID) }))
	if err := a.CatchUp(ctx); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("CatchUp of a deleted workspace: %v, want fs.ErrNotExist", err)
	}
	if err := a.WriteFile(ctx, "y", []byte("y"), 0o644); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("write to a deleted workspace: %v, want fs.ErrNotExist", err)
	}
}

func entryNames(t *testing.T, f *vfs.FS, dir string) []string {
	t.Helper()
	es, err := f.ReadDir(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	return out
}

// TestSharedReloadNotifies: a reload caused by another process's commit
// reaches the watchers as one remote, tree-wide event, so caches (a FUSE
// mount's) drop what they hold and recorders skip it.
func TestSharedReloadNotifies(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, vfs.Options{Shared: true})
	a, b := e.open(e.ws), e.open(e.ws)
	heard := make(chan vfs.Event, 4)
	b.Watch(func(_ context.Context, ev vfs.Event) { heard <- ev })
	must(t, a.WriteFile(ctx, "x", []byte("x"), 0o644))
	must(t, b.CatchUp(ctx))
	select {
	case ev := <-heard:
		if want := (vfs.Event{Op: "reload", Name: ".", Tree: true, Remote: true}); ev != want {
			t.Errorf("heard %+v, want %+v", ev, want)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no event for the reload")
	}
	must(t, b.CatchUp(ctx)) // nothing moved: no reload, no event
	must(t, b.WriteFile(ctx, "y", []byte("y"), 0o644))
	select {
	case ev := <-heard:
		if ev.Remote || ev.Name != "y" {
			t.Errorf("after a local write heard %+v", ev)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("no event for b's own write")
	}
}
