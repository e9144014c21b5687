package mounttest

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"maps"
	"path"
	"slices"
	"sync"
	"testing"
	"testing/fstest"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/mount"
)

// Fixture is what a freshly built mount must contain.
type Fixture struct {
	// Files maps mount-relative paths to their bytes.
	Files map[string][]byte
	// Unchecked lists files whose bytes vary (a random device): only their
	// presence is checked.
	Unchecked []string
	// Writable means the mount accepts Put/Delete (lazy) or
	// WriteFile/Remove (virtual) and the suite exercises them.
	Writable bool
	// Preconditions means Put honours ifVersion (a stale one is
	// errdefs.ErrConflict).
	Preconditions bool
}

// Run runs the suite; newMount returns a fresh mount and its fixture for
// each subtest.
func Run(t *testing.T, newMount func(t *testing.T) (mount.Mount, Fixture)) {
	m, _ := newMount(t)
	st, err := mount.StrategyOf(m)
	if err != nil {
		t.Fatal(err)
	}
	if m.Kind() == "" {
		t.Fatal("Kind is empty")
	}
	switch st {
	case mount.StrategyLazy:
		runLazy(t, newMount)
	case mount.StrategyEager:
		runEager(t, newMount)
	case mount.StrategyVirtual:
		runVirtual(t, newMount)
	}
	t.Run("workspace", func(t *testing.T) { runWorkspace(t, newMount) })
}

// runWorkspace mounts at /mnt/x of a real workspace and checks the mounted
// view with fstest.TestFS (reads hydrate stubs), then that a reopened
// workspace serves it without re-listing and that writes follow the mode.
func runWorkspace(t *testing.T, newMount func(t *testing.T) (mount.Mount, Fixture)) {
	ctx := context.Background()
	m, fx := newMount(t)
	s := NewStore(t)
	f := s.Create("ws")
	mgr := s.Attach(f, "ws", []mount.Spec{{Root: "/mnt/x", Mount: m}}, nil)
	if err := mgr.Index(ctx); err != nil {
		t.Fatal(err)
	}
	ents, err := f.ReadDir(ctx, "mnt")
	if err != nil || len(ents) != 1 || ents[0].Name() != "x" || !ents[0].IsDir() {
		t.Fatalf("ls mnt: %v, %v", ents, err)
	}
	view, err := fs.Sub(f.IOFS(ctx), "mnt/x")
	if err != nil {
		t.Fatal(err)
	}
	if len(fx.Unchecked) == 0 {
		if err := fstest.TestFS(view, slices.Sorted(maps.Keys(fx.Files))...); err != nil {
			t.Fatal(err)
		}
	}
	for p := range fx.Files {
		b, err := f.ReadFile(ctx, "mnt/x/"+p)
		if err != nil {
			t.Fatal(err)
		}
		checkBytes(t, fx, p, b)
	}
	name := slices.Sorted(maps.Keys(fx.Files))[0]
	if err := f.WriteFile(ctx, "mnt/x/"+name, []byte("changed"), 0o644); !errors.Is(err, errdefs.ErrReadOnly) {
		t.Errorf("write under a read-only mount: %v, want errdefs.ErrReadOnly", err)
	}
	if err := f.Remove(ctx, "mnt/x/"+name); !errors.Is(err, errdefs.ErrReadOnly) {
		t.Errorf("remove under a read-only mount: %v, want errdefs.ErrReadOnly", err)
	}
}

func checkBytes(t *testing.T, fx Fixture, rel string, got []byte) {
	t.Helper()
	if slices.Contains(fx.Unchecked, rel) {
		return
	}
	if want := fx.Files[rel]; !bytes.Equal(got, want) {
		t.Errorf("%s: got %q, want %q", rel, trim(got), trim(want))
	}
}

func trim(b []byte) []byte { return b[:min(len(b), 64)] }

func runLazy(t *testing.T, newMount func(t *testing.T) (mount.Mount, Fixture)) {
	ctx := context.Background()
	t.Run("list", func(t *testing.T) {
		m, fx := newMount(t)
		ents, err := m.(mount.Lazy).List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string]int64{}
		for _, e := range ents {
			if !fs.ValidPath(e.Path) || e.Path == "." {
				t.Errorf("entry path %q is not a valid relative path", e.Path)
			}
			if e.Mode&fs.ModeSymlink == 0 {
				got[e.Path] = e.Size
			}
		}
		want := map[string]int64{}
		for p, b := range fx.Files {
			want[p] = int64(len(b))
		}
		if !maps.Equal(got, want) {
			t.Errorf("listed %v, want %v", got, want)
		}
	})
	t.Run("fetch", func(t *testing.T) {
		m, fx := newMount(t)
		for p := range fx.Files {
			b, err := m.(mount.Lazy).Fetch(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			checkBytes(t, fx, p, b)
		}
		if _, err := m.(mount.Lazy).Fetch(ctx, "no/such/file"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("fetch of a missing file: %v, want fs.ErrNotExist", err)
		}
	})
	t.Run("fetch-concurrent", func(t *testing.T) {
		m, fx := newMount(t)
		var wg sync.WaitGroup
		for p := range fx.Files {
			wg.Go(func() {
				b, err := m.(mount.Lazy).Fetch(ctx, p)
				if err != nil {
					t.Error(err)
					return
				}
				checkBytes(t, fx, p, b)
			})
		}
		wg.Wait()
	})
	m, fx := newMount(t)
	if _, ok := m.(mount.Writable); !ok || !fx.Writable {
		return
	}
	t.Run("put-fetch-delete", func(t *testing.T) {
		m, _ := newMount(t)
		w, l := m.(mount.Writable), m.(mount.Lazy)
		v1, err := w.Put(ctx, "new/dir/f.txt", []byte("one"), "")
		if err != nil {
			t.Fatal(err)
		}
		if b, err := l.Fetch(ctx, "new/dir/f.txt"); err != nil || string(b) != "one" {
			t.Fatalf("fetch after put: %q, %v", b, err)
		}
		v2, err := w.Put(ctx, "new/dir/f.txt", []byte("two!"), v1)
		if err != nil {
			t.Fatal(err)
		}
		if v2 == v1 {
			t.Errorf("version unchanged by put: %q", v2)
		}
		ents, err := l.List(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(ents, func(e mount.Entry) bool { return e.Path == "new/dir/f.txt" && e.Version == v2 && e.Size == 4 }) {
			t.Errorf("list after put lacks new/dir/f.txt at version %q: %v", v2, ents)
		}
		if err := w.Delete(ctx, "new/dir/f.txt", ""); err != nil {
			t.Fatal(err)
		}
		if _, err := l.Fetch(ctx, "new/dir/f.txt"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("fetch after delete: %v", err)
		}
		if err := w.Delete(ctx, "new/dir/f.txt", ""); err != nil {
			t.Errorf("delete of a missing file: %v", err)
		}
	})
	if !fx.Preconditions {
		return
	}
	t.Run("precondition", func(t *testing.T) {
		m, fx := newMount(t)
		w := m.(mount.Writable)
		p := slices.Sorted(maps.Keys(fx.Files))[0]
		if _, err := w.Put(ctx, p, []byte("x"), "stale-version"); !errors.Is(err, errdefs.ErrConflict) {
			t.Errorf("put with a stale version: %v, want errdefs.ErrConflict", err)
		}
		if _, err := w.Put(ctx, p, []byte("x"), ""); !errors.Is(err, errdefs.ErrConflict) {
			t.Errorf("put of a new file over an existing one: %v, want errdefs.ErrConflict", err)
		}
		if err := w.Delete(ctx, p, "stale-version"); !errors.Is(err, errdefs.ErrConflict) {
			t.Errorf("delete with a stale version: %v, want errdefs.ErrConflict", err)
		}
		b, err := m.(mount.Lazy).Fetch(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		checkBytes(t, fx, p, b)
	})
}

// Recorder is a mount.WriteAPI that keeps what an eager mount writes.
type Recorder struct {
	mu       sync.Mutex
	Files    map[string][]byte
	Dirs     map[string]bool
	Symlinks map[string]string
}

var _ mount.WriteAPI = (*Recorder)(nil)

// NewRecorder returns an empty Recorder.
func NewRecorder() *Recorder {
	return &Recorder{Files: map[string][]byte{}, Dirs: map[string]bool{}, Symlinks: map[string]string{}}
}

func (r *Recorder) check(rel string) error {
	if !fs.ValidPath(rel) || rel == "." {
		return &fs.PathError{Op: "write", Path: rel, Err: fs.ErrInvalid}
	}
	return nil
}

// WriteFile records a file.
func (r *Recorder) WriteFile(rel string, data []byte, _ fs.FileMode) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.check(rel); err != nil {
		return err
	}
	r.Files[rel] = bytes.Clone(data)
	return nil
}

// Mkdir records a directory.
func (r *Recorder) Mkdir(rel string, _ fs.FileMode) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.check(rel); err != nil {
		return err
	}
	r.Dirs[rel] = true
	return nil
}

// Symlink records a symbolic link.
func (r *Recorder) Symlink(target, rel string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if err := r.check(rel); err != nil {
		return err
	}
	r.Symlinks[rel] = target
	return nil
}

func runEager(t *testing.T, newMount func(t *testing.T) (mount.Mount, Fixture)) {
	t.Run("materialize", func(t *testing.T) {
		m, fx := newMount(t)
		r := NewRecorder()
		if err := m.(mount.Eager).Materialize(context.Background(), r); err != nil {
			t.Fatal(err)
		}
		if got, want := slices.Sorted(maps.Keys(r.Files)), slices.Sorted(maps.Keys(fx.Files)); !slices.Equal(got, want) {
			t.Fatalf("materialized %v, want %v", got, want)
		}
		for p, b := range r.Files {
			checkBytes(t, fx, p, b)
		}
	})
}

func runVirtual(t *testing.T, newMount func(t *testing.T) (mount.Mount, Fixture)) {
	ctx := context.Background()
	t.Run("fstest", func(t *testing.T) {
		m, fx := newMount(t)
		fsys := mount.VirtualFS(ctx, m.(mount.Virtual))
		// Bytes that change between reads (devices) defeat fstest's
		// consistency checks.
		if len(fx.Unchecked) == 0 {
			if err := fstest.TestFS(fsys, slices.Sorted(maps.Keys(fx.Files))...); err != nil {
				t.Fatal(err)
			}
		}
		for p := range fx.Files {
			b, err := fs.ReadFile(fsys, p)
			if err != nil {
				t.Fatal(err)
			}
			checkBytes(t, fx, p, b)
			fi, err := fs.Stat(fsys, p)
			if err != nil || fi.Name() != path.Base(p) || fi.IsDir() {
				t.Errorf("stat %s: %v, %v", p, fi, err)
			}
		}
		if _, err := fs.Stat(fsys, "no/such"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("stat of a missing path: %v", err)
		}
	})
	m, fx := newMount(t)
	if _, ok := m.(mount.VirtualWriter); !ok || !fx.Writable {
		return
	}
	t.Run("write-remove", func(t *testing.T) {
		m, _ := newMount(t)
		w := m.(mount.VirtualWriter)
		if err := w.WriteFile(ctx, "w/new.txt", []byte("hi"), 0o644); err != nil {
			t.Fatal(err)
		}
		if b, err := w.ReadFile(ctx, "w/new.txt"); err != nil || string(b) != "hi" {
			t.Fatalf("read after write: %q, %v", b, err)
		}
		if err := w.Remove(ctx, "w/new.txt"); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Stat(ctx, "w/new.txt"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("stat after remove: %v", err)
		}
	})
}
