package mount_test

import (
	"context"
	"errors"
	"io/fs"
	"maps"
	"sync"
	"testing"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/mount"
	"github.com/forkspace/forkspace/mount/mounttest"
)

// tree is an eager test mount materializing a map (changeable).
type tree struct {
	mu    sync.Mutex
	files map[string]string
	runs  int
}

func (e *tree) Kind() string { return "tree" }

func (e *tree) Materialize(_ context.Context, api mount.WriteAPI) error {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.runs++
	for p, b := range e.files {
		if err := api.WriteFile(p, []byte(b), 0o644); err != nil {
			return err
		}
	}
	return api.Symlink("a", "link")
}

func (e *tree) set(files map[string]string) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.files = maps.Clone(files)
}

func TestEagerRefresh(t *testing.T) {
	e := &tree{files: map[string]string{"a": "1", "d/b": "2", ".cache/x": "hidden"}}
	s := mounttest.NewStore(t)
	f := s.Create("ws")
	m := s.Attach(f, "ws", []mount.Spec{{Root: "/repo", Mount: e, Options: mount.Options{Ignore: []string{".cache"}}}}, nil)
	if read(t, f, "repo/link") != "1" || read(t, f, "repo/d/b") != "2" {
		t.Fatal("materialized")
	}
	if _, err := f.Stat(ctx, "repo/.cache"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("an ignored path was materialized: %v", err)
	}
	e.set(map[string]string{"a": "one", "c": "3"})
	ok(t, m.Refresh(ctx, "/repo"))
	if read(t, f, "repo/a") != "one" || read(t, f, "repo/c") != "3" || e.runs != 2 {
		t.Fatal("refresh")
	}
	if _, err := f.Stat(ctx, "repo/d/b"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("refresh kept a removed file: %v", err)
	}
	// Caps count what an eager mount writes too.
	e2 := &tree{files: map[string]string{"a": "1", "b": "2"}}
	m2 := s.Attach(s.Create("capped"), "capped", []mount.Spec{{Root: "/repo", Mount: e2, Options: mount.Options{MaxEntries: 2}}}, nil)
	if err := m2.Index(ctx); !errors.Is(err, errdefs.ErrQuota) {
		t.Fatalf("eager cap: %v", err)
	}
}

func TestIgnoredPathsStayLocal(t *testing.T) {
	src := newSource(map[string]string{"a": "1", "node_modules/x": "dep"})
	s := mounttest.NewStore(t)
	f := s.Create("ws")
	m := s.Attach(f, "ws", []mount.Spec{{Root: "/data", Mount: src, Options: mount.Options{Mode: mount.ReadWrite, WriteBack: mount.Manual, Ignore: []string{"node_modules"}}}}, nil)
	if _, err := f.Stat(ctx, "data/node_modules"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("an ignored entry was indexed: %v", err)
	}
	ok(t, f.MkdirAll(ctx, "data/node_modules/pkg", 0o755))
	ok(t, f.WriteFile(ctx, "data/node_modules/pkg/index.js", []byte("x"), 0o644))
	ok(t, m.Flush(ctx, ""))
	if src.puts.Load() != 0 {
		t.Fatal("an ignored path was written back")
	}
}
