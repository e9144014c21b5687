package vfs_test

import (
	"context"
	"io/fs"
	"testing"
	"time"

	"github.com/forkspace/forkspace/vfs"
	"github.com/forkspace/forkspace/vfs/vfstest"
)

// TestRenameNoReplace: an existing target, a dangling link included, is
// fs.ErrExist and changes nothing; a free target is an ordinary rename.
func TestRenameNoReplace(t *testing.T) {
	ctx := context.Background()
	f := newFS(t)
	must(t, f.WriteFile(ctx, "a", []byte("a"), 0o644))
	must(t, f.WriteFile(ctx, "b", []byte("b"), 0o644))
	must(t, f.Symlink(ctx, "missing", "l"))
	for _, dst := range []string{"b", "l"} {
		vfstest.Fails(t, f, fs.ErrExist, func() error { return f.RenameNoReplace(ctx, "a", dst) })
	}
	must(t, f.RenameNoReplace(ctx, "a", "c"))
	if data, err := f.ReadFile(ctx, "c"); err != nil || string(data) != "a" {
		t.Fatalf("c = %q, %v", data, err)
	}
}

// TestLchownLchtimes change the link itself, not its target.
func TestLchownLchtimes(t *testing.T) {
	ctx := context.Background()
	f := newFS(t)
	must(t, f.WriteFile(ctx, "target", nil, 0o644))
	must(t, f.Symlink(ctx, "target", "l"))
	mtime := time.Unix(1000, 123456789)
	must(t, f.Lchown(ctx, "l", 7, 8))
	must(t, f.Lchtimes(ctx, "l", time.Time{}, mtime))
	li, err := f.Lstat(ctx, "l")
	must(t, err)
	ti, err := f.Stat(ctx, "l")
	must(t, err)
	la, ta := li.Sys().(*vfs.Attr), ti.Sys().(*vfs.Attr)
	if la.Uid != 7 || la.Gid != 8 || !la.Mtime.Equal(mtime) {
		t.Fatalf("link attributes %+v", la)
	}
	if ta.Uid != 0 || ta.Gid != 0 || ta.Mtime.Equal(mtime) {
		t.Fatalf("target changed: %+v", ta)
	}
}

// TestRenameExchange swaps a file and a directory in different
// directories (link counts, primary links, a secondary hard link) and
// refuses missing entries and a directory into its own subtree,
// changing nothing.
func TestRenameExchange(t *testing.T) {
	ctx := context.Background()
	f := newFS(t)
	must(t, f.MkdirAll(ctx, "x/sub", 0o755))
	must(t, f.MkdirAll(ctx, "y", 0o755))
	must(t, f.WriteFile(ctx, "y/file", []byte("f"), 0o644))
	must(t, f.Link(ctx, "y/file", "hard"))
	must(t, f.RenameExchange(ctx, "x/sub", "y/file"))
	if fi, err := f.Lstat(ctx, "y/file"); err != nil || !fi.IsDir() {
		t.Fatalf("y/file after exchange: %v, %v", fi, err)
	}
	if data, err := f.ReadFile(ctx, "x/sub"); err != nil || string(data) != "f" {
		t.Fatalf("x/sub after exchange: %q, %v", data, err)
	}
	must(t, f.Check(ctx))
	for name, want := range map[string]uint32{"x": 2, "y": 3} {
		fi, err := f.Stat(ctx, name)
		must(t, err)
		if n := fi.Sys().(*vfs.Attr).Nlink; n != want {
			t.Errorf("%s has %d links, want %d", name, n, want)
		}
	}
	must(t, f.RenameExchange(ctx, "hard", "x/sub")) // two links of one inode
	vfstest.Fails(t, f, fs.ErrNotExist, func() error { return f.RenameExchange(ctx, "x/sub", "nope") })
	must(t, f.MkdirAll(ctx, "y/file/in", 0o755))
	vfstest.Fails(t, f, fs.ErrInvalid, func() error { return f.RenameExchange(ctx, "y/file", "y/file/in") })
	vfstest.Fails(t, f, fs.ErrInvalid, func() error { return f.RenameExchange(ctx, "y/file/in", "y/file") })
}
