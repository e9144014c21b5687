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
