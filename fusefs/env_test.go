package fusefs_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/fusefs"
	"github.com/forkspace/forkspace/fusefs/fusetest"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/vfs"
)

// openStore opens a fresh store in a temporary directory.
func openStore(t testing.TB) *forkspace.Store {
	t.Helper()
	st, err := forkspace.Open(context.Background(), forkspace.Options{Dir: t.TempDir(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// create makes workspace name in st.
func create(t testing.TB, st *forkspace.Store, name string, q meta.Quota) *forkspace.Workspace {
	t.Helper()
	w, err := st.Create(context.Background(), name, forkspace.CreateOptions{Quota: q})
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// mount mounts fsys on a fresh directory, unmounted when the test ends.
func mount(t testing.TB, fsys *vfs.FS, opts fusefs.Options) string {
	t.Helper()
	fusetest.Require(t)
	dir := t.TempDir()
	srv, err := fusefs.Mount(context.Background(), dir, fsys, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := srv.Unmount(); err != nil {
			t.Errorf("unmount: %v", err)
		}
	})
	return dir
}

// mountAll mounts every workspace of st (fusefs.MountAll) at a new
// directory, unmounted when the test ends.
func mountAll(t testing.TB, st *forkspace.Store, opts fusefs.Options) string {
	t.Helper()
	fusetest.Require(t)
	dir := t.TempDir()
	srv, err := fusefs.MountAll(context.Background(), dir, fusefs.StoreWorkspaces{Store: st}, opts)
	ok(t, err)
	t.Cleanup(func() { ok(t, srv.Unmount()) })
	return dir
}

// newMount mounts a new workspace of a fresh store.
func newMount(t testing.TB) (*forkspace.Workspace, string) {
	t.Helper()
	st := openStore(t)
	w := create(t, st, "w", meta.Quota{})
	return w, mount(t, w.FS, fusefs.Options{})
}

func ok(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
