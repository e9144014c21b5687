package vfs_test

import (
	"context"
	"github.com/forkspace/forkspace/vfs/vfstest"
	"testing"
	"time"

	"github.com/forkspace/forkspace/kv"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/vfs"
)

// env is a real store: SQLite metadata and a blob directory in a temp dir.
type env struct {
	t    testing.TB
	dir  string
	deps vfs.Deps
	ws   *meta.Workspace
	opts vfs.Options
}

// newEnv creates a store with one empty workspace.
func newEnv(t testing.TB, opts vfs.Options) *env {
	t.Helper()
	e := &env{t: t, dir: t.TempDir(), opts: opts}
	e.connect()
	ctx := context.Background()
	root, nodes, err := vfs.NewTree(ctx, e.deps, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	e.ws = &meta.Workspace{ID: "ws1", Name: "one", Root: root, Quota: opts.Quota}
	e.createWorkspace(e.ws, nodes)
	return e
}

// connect opens the store's components.
func (e *env) connect() {
	e.t.Helper()
	e.deps = vfstest.OpenDeps(e.t, e.dir)
}

// createWorkspace records w with the tree nodes of its root.
func (e *env) createWorkspace(w *meta.Workspace, nodes []kv.Node) {
	e.t.Helper()
	objs := make([]meta.Object, len(nodes))
	for i, n := range nodes {
		objs[i] = meta.Object{Hash: n.Hash, Data: n.Data}
	}
	err := e.deps.Meta.Update(context.Background(), func(tx meta.Tx) error {
		if len(objs) > 0 {
			if err := tx.PutNodes(objs); err != nil {
				return err
			}
		}
		return tx.CreateWorkspace(w)
	})
	if err != nil {
		e.t.Fatal(err)
	}
}

// open opens the live filesystem of workspace w.
func (e *env) open(w *meta.Workspace) *vfs.FS {
	e.t.Helper()
	f, err := vfs.Open(context.Background(), e.deps, w, e.opts)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { _ = f.Close() })
	return f
}

// reopen closes f and the whole store, opens the store again from disk and
// returns the workspace's live filesystem: what a restart sees.
func (e *env) reopen(f *vfs.FS) *vfs.FS {
	e.t.Helper()
	if err := f.Close(); err != nil {
		e.t.Fatal(err)
	}
	if err := e.deps.Meta.Close(); err != nil {
		e.t.Fatal(err)
	}
	e.connect()
	return e.open(e.ws)
}

// fork creates a workspace whose head is f's current root.
func (e *env) fork(f *vfs.FS, id string) *vfs.FS {
	e.t.Helper()
	root, err := f.Root(context.Background())
	if err != nil {
		e.t.Fatal(err)
	}
	w := &meta.Workspace{ID: id, Name: id, Root: root, ParentID: e.ws.ID}
	e.createWorkspace(w, nil)
	return e.open(w)
}

// newFS returns a fresh live filesystem in its own store.
func newFS(t *testing.T) *vfs.FS {
	e := newEnv(t, vfs.Options{})
	return e.open(e.ws)
}
