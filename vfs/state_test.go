package vfs_test

import (
	"context"
	"io/fs"
	"testing"
	"testing/fstest"
	"time"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/vfs"
	"github.com/forkspace/forkspace/vfs/vfstest"
)

// populate builds a tree that uses every kind of record.
func populate(t testing.TB, f *vfs.FS) {
	t.Helper()
	ctx := context.Background()
	must(t, f.MkdirAll(ctx, "src/pkg/deep", 0o755))
	must(t, f.WriteFile(ctx, "src/main.go", []byte("package main\n"), 0o644))
	must(t, f.WriteFile(ctx, "src/pkg/big.bin", pattern(40<<10), 0o600))
	must(t, f.WriteFile(ctx, "src/pkg/deep/empty", nil, 0o644))
	must(t, f.Symlink(ctx, "../main.go", "src/pkg/main"))
	must(t, f.Link(ctx, "src/main.go", "hard"))
	must(t, f.Setxattr(ctx, "src", "user.tag", []byte("v")))
	must(t, f.Chtimes(ctx, "hard", time.Unix(1, 2), time.Unix(3, 4)))
	must(t, f.Chown(ctx, "src/pkg", 7, 8))
	h, err := f.OpenFile(ctx, "log", vfs.O_WRONLY|vfs.O_CREATE|vfs.O_APPEND, 0o644)
	must(t, err)
	for range 3 {
		_, err := h.Write([]byte("line\n"))
		must(t, err)
	}
	must(t, h.Sync())
	_, err = h.Write([]byte("after sync\n"))
	must(t, err)
	must(t, h.Close())
}

// fataler is what must needs of a testing.TB or *rapid.T.
type fataler interface {
	Helper()
	Fatal(args ...any)
}

func must(t fataler, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func pattern(n int) []byte {
	b := make([]byte, n)
	x := uint64(n) | 1
	for i := range b {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b[i] = byte(x)
	}
	return b
}

// TestReopen: everything acknowledged survives closing and reopening the
// store, from staging alone, from a folded tree, and from a mix.
func TestReopen(t *testing.T) {
	ctx := context.Background()
	for _, fold := range []string{"never", "all", "half"} {
		t.Run(fold, func(t *testing.T) {
			e := newEnv(t, vfs.Options{FoldRows: -1})
			f := e.open(e.ws)
			populate(t, f)
			if fold == "all" {
				must(t, f.Fold(ctx))
			}
			if fold == "half" {
				must(t, f.Fold(ctx))
				must(t, f.Rename(ctx, "src/pkg", "pkg"))
				must(t, f.Remove(ctx, "hard"))
				must(t, f.WriteFile(ctx, "pkg/new", []byte("new"), 0o644))
			}
			want := vfstest.Dump(t, f)
			f = e.reopen(f)
			vfstest.Equal(t, want, vfstest.Dump(t, f))
			// Inode numbers are never reused after a restart.
			must(t, f.WriteFile(ctx, "fresh", nil, 0o644))
			fi, err := f.Stat(ctx, "fresh")
			must(t, err)
			for p := range want {
				if st, err := f.Lstat(ctx, p); err == nil && st.Sys().(*vfs.Attr).Ino == fi.Sys().(*vfs.Attr).Ino {
					t.Fatalf("inode %d reused for %s", fi.Sys().(*vfs.Attr).Ino, p)
				}
			}
		})
	}
}

// TestFoldEquivalence: folding changes nothing visible, and a fold with
// mutations landing concurrently loses none.
func TestFoldEquivalence(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, vfs.Options{FoldRows: -1})
	f := e.open(e.ws)
	populate(t, f)
	want := vfstest.Dump(t, f)
	must(t, f.Fold(ctx))
	vfstest.Equal(t, want, vfstest.Dump(t, f))
	must(t, f.Fold(ctx)) // nothing staged
	vfstest.Equal(t, want, vfstest.Dump(t, f))

	done := make(chan error)
	go func() {
		var err error
		for i := 0; i < 50 && err == nil; i++ {
			err = f.WriteFile(ctx, "c"+string(rune('a'+i%26))+string(rune('a'+i/26)), []byte{byte(i)}, 0o644)
		}
		done <- err
	}()
	for range 10 {
		must(t, f.Fold(ctx))
	}
	must(t, <-done)
	want = vfstest.Dump(t, f)
	must(t, f.Fold(ctx))
	vfstest.Equal(t, want, vfstest.Dump(t, f))
	vfstest.Equal(t, want, vfstest.Dump(t, e.reopen(f)))
}

// TestSnapshot: a snapshot of a root shows that state, ignores later
// changes, passes fstest and rejects every mutation.
func TestSnapshot(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, vfs.Options{})
	f := e.open(e.ws)
	populate(t, f)
	want := vfstest.Dump(t, f)
	root, err := f.Root(ctx)
	must(t, err)
	snap := vfs.Snapshot(e.deps, root, nil)
	vfstest.Equal(t, want, vfstest.Dump(t, snap))
	must(t, f.RemoveAll(ctx, "src"))
	vfstest.Equal(t, want, vfstest.Dump(t, snap))
	must(t, fstest.TestFS(snap.IOFS(ctx), "src/main.go", "src/pkg/big.bin", "log", "hard"))

	if !snap.ReadOnly() || f.ReadOnly() {
		t.Fatal("ReadOnly")
	}
	mutations := map[string]func() error{
		"write":     func() error { return snap.WriteFile(ctx, "x", nil, 0o644) },
		"mkdir":     func() error { return snap.Mkdir(ctx, "x", 0o755) },
		"mkdirall":  func() error { return snap.MkdirAll(ctx, "x/y", 0o755) },
		"remove":    func() error { return snap.Remove(ctx, "log") },
		"removeall": func() error { return snap.RemoveAll(ctx, "src") },
		"rename":    func() error { return snap.Rename(ctx, "log", "log2") },
		"symlink":   func() error { return snap.Symlink(ctx, "log", "l") },
		"link":      func() error { return snap.Link(ctx, "log", "l") },
		"chmod":     func() error { return snap.Chmod(ctx, "log", 0o600) },
		"chown":     func() error { return snap.Chown(ctx, "log", 1, 1) },
		"chtimes":   func() error { return snap.Chtimes(ctx, "log", time.Now(), time.Now()) },
		"truncate":  func() error { return snap.Truncate(ctx, "log", 0) },
		"setxattr":  func() error { return snap.Setxattr(ctx, "log", "user.a", nil) },
		"rmxattr":   func() error { return snap.Removexattr(ctx, "src", "user.tag") },
		"create":    func() error { _, err := snap.Create(ctx, "x"); return err },
		"openrw":    func() error { _, err := snap.OpenFile(ctx, "log", vfs.O_RDWR, 0); return err },
		"opentrunc": func() error { _, err := snap.OpenFile(ctx, "log", vfs.O_TRUNC, 0); return err },
	}
	for name, op := range mutations {
		t.Run(name, func(t *testing.T) { vfstest.Fails(t, snap, errdefs.ErrReadOnly, op) })
	}
	// Reading handles work; writes through them cannot happen.
	h, err := snap.Open(ctx, "log")
	must(t, err)
	_, err = h.Write([]byte("x"))
	vfstest.IsPathErr(t, err, fs.ErrPermission)
	must(t, h.Close())
	must(t, snap.Fold(ctx))
	if r, err := snap.Root(ctx); err != nil || r != root {
		t.Fatalf("snapshot root %v %v", r, err)
	}
}

// TestFork: a fork starts with its parent's state and diverges from it.
func TestFork(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, vfs.Options{})
	parent := e.open(e.ws)
	populate(t, parent)
	want := vfstest.Dump(t, parent)
	child := e.fork(parent, "child")
	vfstest.Equal(t, want, vfstest.Dump(t, child))
	must(t, child.WriteFile(ctx, "src/main.go", []byte("package child\n"), 0o644))
	must(t, child.WriteFile(ctx, "childonly", nil, 0o644))
	vfstest.Equal(t, want, vfstest.Dump(t, parent))
	// Both allocate from the store-wide counter: no shared inode numbers.
	must(t, parent.WriteFile(ctx, "parentonly", nil, 0o644))
	a, err := child.Stat(ctx, "childonly")
	must(t, err)
	b, err := parent.Stat(ctx, "parentonly")
	must(t, err)
	if a.Sys().(*vfs.Attr).Ino == b.Sys().(*vfs.Attr).Ino {
		t.Fatal("fork and parent allocated the same inode")
	}
}

// TestClosed: operations after Close fail with fs.ErrClosed.
func TestClosed(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, vfs.Options{})
	f := e.open(e.ws)
	must(t, f.WriteFile(ctx, "a", []byte("x"), 0o644))
	must(t, f.Close())
	must(t, f.Close())
	_, err := f.Stat(ctx, "a")
	vfstest.IsPathErr(t, err, fs.ErrClosed)
	vfstest.IsPathErr(t, f.WriteFile(ctx, "b", nil, 0o644), fs.ErrClosed)
	vfstest.IsPathErr(t, f.Fold(ctx), fs.ErrClosed)
}
