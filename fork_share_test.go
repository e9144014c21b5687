package forkspace_test

import (
	"context"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"testing"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/gc"
)

// TestForkSharesStagedDelta tries to break the sharing of a staged delta
// between a workspace and its forks (docs/decisions/028: the fork's stored
// delta refers to the parent's records, its overlay is a copy-on-write
// clone of the parent's). With every change staged (no fold), writes to
// the parent after the fork must not show in the fork, nor the fork's in
// the parent, nor either in a fork of the fork; folding the parent, then
// reopening the store, then deleting the parent and collecting garbage
// with no grace period must leave every fork reading what it held, its
// chunked files' blobs included.
func TestForkSharesStagedDelta(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	open := func() *forkspace.Store {
		t.Helper()
		st, err := openPass(t, forkspace.Options{Dir: dir, FoldRows: 1 << 20})
		if err != nil {
			t.Fatal(err)
		}
		return st
	}
	st := open()
	defer func() { st.Close() }()
	rng := rand.New(rand.NewPCG(1, 2))
	big := func() string { // chunked into blobs, never inline
		b := make([]byte, 96<<10)
		for i := range b {
			b[i] = byte(rng.Uint32())
		}
		return string(b)
	}
	p := mustCreate(t, st, "p")
	want := map[string]map[string]string{"p": {}}
	put := func(w *forkspace.Workspace, name, data string) {
		t.Helper()
		write(t, w, name, data)
		want[w.Name()][name] = data
	}
	for i := range 40 {
		put(p, fmt.Sprintf("d%d/small%02d", i%4, i), fmt.Sprint("small ", i))
	}
	for i := range 4 {
		put(p, fmt.Sprintf("big%d", i), big())
	}
	fork := func(src *forkspace.Workspace, name string) *forkspace.Workspace {
		t.Helper()
		w, err := src.Fork(ctx, name, forkspace.ForkOptions{})
		if err != nil {
			t.Fatal(err)
		}
		want[name] = map[string]string{}
		for k, v := range want[src.Name()] {
			want[name][k] = v
		}
		return w
	}
	remove := func(w *forkspace.Workspace, name string) {
		t.Helper()
		if err := w.Remove(ctx, name); err != nil {
			t.Fatal(err)
		}
		delete(want[w.Name()], name)
	}
	c := fork(p, "c")

	// The parent's writes after the fork, and the fork's, stay on their side.
	put(p, "d0/small00", "parent's")
	put(p, "big0", big())
	put(p, "new-in-parent", "p")
	remove(p, "d1/small01")
	put(c, "d0/small04", "fork's")
	put(c, "big1", big())
	put(c, "new-in-fork", "c")
	remove(c, "d2/small02")
	g := fork(c, "g") // a fork of a fork that committed
	h := fork(g, "h") // and of one that did not
	put(g, "big2", big())
	put(h, "d3/small03", "h's")

	check := func(st *forkspace.Store, names ...string) {
		t.Helper()
		for _, name := range names {
			w, err := st.Workspace(ctx, name)
			if err != nil {
				t.Fatal(err)
			}
			checkTree(t, w, want[name])
		}
	}
	check(st, "p", "c", "g", "h")
	if err := p.Fold(ctx); err != nil {
		t.Fatal(err)
	}
	put(p, "after-fold", "p")
	check(st, "p", "c", "g", "h")

	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st = open()
	check(st, "p", "c", "g", "h")
	for _, name := range []string{"p", "c"} {
		if err := st.Delete(ctx, name); err != nil {
			t.Fatal(err)
		}
		delete(want, name)
		if _, err := st.GC(ctx, forkspace.GCOptions{Grace: gc.NoGrace}); err != nil {
			t.Fatal(err)
		}
		check(st, "g", "h")
	}
	r, err := st.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !r.Clean() {
		t.Errorf("check after deleting the parents: %+v", r.Problems)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st = open()
	check(st, "g", "h")
}

// checkTree checks that the regular files of w are exactly want (path to
// contents).
func checkTree(t *testing.T, w *forkspace.Workspace, want map[string]string) {
	t.Helper()
	ctx := context.Background()
	got := map[string]bool{}
	err := fs.WalkDir(w.IOFS(ctx), ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		got[name] = true
		if _, ok := want[name]; !ok {
			t.Errorf("%s: %s is there, not expected", w.Name(), name)
		}
		return nil
	})
	if err != nil {
		t.Fatalf("%s: walk: %v", w.Name(), err)
	}
	for name, data := range want {
		if !got[name] {
			t.Errorf("%s: %s is missing", w.Name(), name)
			continue
		}
		if b, err := w.ReadFile(ctx, name); err != nil || string(b) != data {
			t.Errorf("%s: %s reads %s (%v), want %s", w.Name(), name, brief(b), err, brief([]byte(data)))
		}
	}
}

// TestForkDuringWrites forks a workspace while another goroutine writes
// to it and its overlay folds (FoldRows 64): each fork opens from the
// parent's held in-memory state, which must be the state its transaction
// stored. After reopening the store, every fork reads what it read in
// memory right after the fork.
func TestForkDuringWrites(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := openPass(t, forkspace.Options{Dir: dir, FoldRows: 64})
	if err != nil {
		t.Fatal(err)
	}
	p := mustCreate(t, st, "p")
	for i := range 50 {
		write(t, p, fmt.Sprintf("f%02d", i), "0")
	}
	stop := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		for i := 1; ; i++ {
			select {
			case <-stop:
				done <- nil
				return
			default:
			}
			if err := p.WriteFile(ctx, fmt.Sprintf("f%02d", i%50), []byte(fmt.Sprint(i)), 0o644); err != nil {
				done <- err
				return
			}
		}
	}()
	const forks = 20
	seen := map[string]map[string]string{}
	for i := range forks {
		name := fmt.Sprint("fork", i)
		w, err := p.Fork(ctx, name, forkspace.ForkOptions{})
		if err != nil {
			t.Fatal(err)
		}
		seen[name] = treeOf(t, w)
	}
	close(stop)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st, err = openPass(t, forkspace.Options{Dir: dir, FoldRows: 64})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for name, want := range seen {
		w, err := st.Workspace(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		checkTree(t, w, want)
	}
}

// brief shows short contents as they are and long ones by their length.
func brief(b []byte) string {
	if len(b) > 32 {
		return fmt.Sprintf("%d bytes", len(b))
	}
	return fmt.Sprintf("%q", b)
}

// treeOf returns the regular files of w and their contents.
func treeOf(t *testing.T, w *forkspace.Workspace) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	err := fs.WalkDir(w.IOFS(ctx), ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := w.ReadFile(ctx, name)
		out[name] = string(b)
		return err
	})
	if err != nil {
		t.Fatalf("%s: walk: %v", w.Name(), err)
	}
	return out
}
