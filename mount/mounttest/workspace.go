package mounttest

import (
	"context"
	"github.com/forkspace/forkspace/vfs/vfstest"
	"testing"
	"time"

	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/mount"
	"github.com/forkspace/forkspace/vfs"
)

// Store is a real store for mount tests: SQLite metadata and a blob
// directory in a temporary directory, closed when the test ends.
type Store struct {
	t    testing.TB
	dir  string
	Deps vfs.Deps
}

// NewStore opens an empty store in t.TempDir().
func NewStore(t testing.TB) *Store {
	t.Helper()
	s := &Store{t: t, dir: t.TempDir()}
	s.connect()
	return s
}

func (s *Store) connect() {
	s.t.Helper()
	s.Deps = vfstest.OpenDeps(s.t, s.dir)
}

// Reopen closes the metadata store and opens everything again from disk
// (a restart). Open filesystems of the old store must be closed first.
func (s *Store) Reopen() {
	s.t.Helper()
	if err := s.Deps.Meta.Close(); err != nil {
		s.t.Fatal(err)
	}
	s.connect()
}

// Create records an empty workspace id and opens its live filesystem.
func (s *Store) Create(id string) *vfs.FS {
	s.t.Helper()
	root, nodes, err := vfs.NewTree(context.Background(), s.Deps, time.Now())
	if err != nil {
		s.t.Fatal(err)
	}
	objs := make([]meta.Object, len(nodes))
	for i, n := range nodes {
		objs[i] = meta.Object{Hash: n.Hash, Data: n.Data}
	}
	s.insert(&meta.Workspace{ID: id, Name: id, Root: root}, objs)
	return s.Open(id)
}

// Fork records workspace id whose head is f's current state (folded) and
// opens it.
func (s *Store) Fork(f *vfs.FS, parent, id string) *vfs.FS {
	s.t.Helper()
	root, err := f.Root(context.Background())
	if err != nil {
		s.t.Fatal(err)
	}
	s.insert(&meta.Workspace{ID: id, Name: id, Root: root, ParentID: parent}, nil)
	return s.Open(id)
}

func (s *Store) insert(w *meta.Workspace, objs []meta.Object) {
	s.t.Helper()
	err := s.Deps.Meta.Update(context.Background(), func(tx meta.Tx) error {
		if len(objs) > 0 {
			if err := tx.PutNodes(objs); err != nil {
				return err
			}
		}
		return tx.CreateWorkspace(w)
	})
	if err != nil {
		s.t.Fatal(err)
	}
}

// Open opens workspace id's live filesystem (closed when the test ends).
func (s *Store) Open(id string) *vfs.FS {
	s.t.Helper()
	f, err := vfs.Open(context.Background(), s.Deps, &meta.Workspace{ID: id}, vfs.Options{})
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { _ = f.Close() })
	return f
}

// Attach attaches a mount manager for specs to f (workspace id), closed
// when the test ends.
func (s *Store) Attach(f *vfs.FS, id string, specs []mount.Spec, hook mount.ConflictHook) *mount.Manager {
	s.t.Helper()
	tab, err := mount.NewTable(specs)
	if err != nil {
		s.t.Fatal(err)
	}
	m, err := mount.Attach(context.Background(), mount.Config{
		FS: f, Meta: s.Deps.Meta, Table: tab, OnConflict: hook,
		Context: mount.Context{SessionID: "session-" + id, WorkspaceID: id},
	})
	if err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { _ = m.Close() })
	return m
}
