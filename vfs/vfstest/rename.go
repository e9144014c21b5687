package vfstest

import (
	"context"
	"errors"
	"io/fs"
	"testing"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/vfs"
)

func testRename(t *testing.T, f *vfs.FS) {
	ctx := context.Background()
	write(t, f, "a", "A")
	write(t, f, "b", "B")
	ok(t, f.Mkdir(ctx, "d", 0o755))
	ok(t, f.Mkdir(ctx, "e", 0o755))
	write(t, f, "e/x", "X")

	ok(t, f.Rename(ctx, "a", "c"))
	if got := read(t, f, "c"); got != "A" {
		t.Fatalf("renamed contents %q", got)
	}
	if _, err := f.Stat(ctx, "a"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("old name still there: %v", err)
	}
	ino := attr(t, f, "c").Ino
	ok(t, f.Rename(ctx, "c", "b")) // replaces b
	if got, a := read(t, f, "b"), attr(t, f, "b"); got != "A" || a.Ino != ino {
		t.Fatalf("replace: %q ino %d want %d", got, a.Ino, ino)
	}
	u, err := f.Usage(ctx)
	ok(t, err)
	if u.Entries != 4 || u.Bytes != 2 {
		t.Fatalf("usage after replacing rename: %+v", u)
	}
	before := Dump(t, f)
	ok(t, f.Rename(ctx, "b", "b")) // onto itself
	Equal(t, before, Dump(t, f))

	Fails(t, f, fs.ErrNotExist, func() error { return f.Rename(ctx, "missing", "z") })
	Fails(t, f, fs.ErrNotExist, func() error { return f.Rename(ctx, "b", "nodir/z") })
	Fails(t, f, errdefs.ErrNotDir, func() error { return f.Rename(ctx, "b", "b/z") })
	Fails(t, f, errdefs.ErrIsDir, func() error { return f.Rename(ctx, "b", "d") })
	Fails(t, f, errdefs.ErrNotDir, func() error { return f.Rename(ctx, "d", "b") })
	Fails(t, f, errdefs.ErrNotEmpty, func() error { return f.Rename(ctx, "d", "e") })
	Fails(t, f, fs.ErrInvalid, func() error { return f.Rename(ctx, ".", "z") })
	Fails(t, f, fs.ErrInvalid, func() error { return f.Rename(ctx, "d", ".") })

	ok(t, f.Rename(ctx, "e", "d")) // directory over an empty directory
	if got := read(t, f, "d/x"); got != "X" {
		t.Fatalf("moved directory contents %q", got)
	}
	if n := attr(t, f, ".").Nlink; n != 3 {
		t.Fatalf("root nlink after replacing a directory: %d, want 3", n)
	}

	// Symbolic links are moved, not followed.
	ok(t, f.Symlink(ctx, "d", "ln"))
	ok(t, f.Rename(ctx, "ln", "ln2"))
	if target, err := f.Readlink(ctx, "ln2"); err != nil || target != "d" {
		t.Fatalf("moved link: %q %v", target, err)
	}
	write(t, f, "over", "O")
	ok(t, f.Rename(ctx, "over", "ln2")) // replaces the link itself
	if fi, err := f.Lstat(ctx, "ln2"); err != nil || !fi.Mode().IsRegular() {
		t.Fatalf("link not replaced: %v %v", fi, err)
	}
	if fi, err := f.Stat(ctx, "d"); err != nil || !fi.IsDir() {
		t.Fatalf("link target touched: %v %v", fi, err)
	}

	// Two links to one inode: nothing happens.
	ok(t, f.Link(ctx, "ln2", "hl"))
	before = Dump(t, f)
	ok(t, f.Rename(ctx, "ln2", "hl"))
	Equal(t, before, Dump(t, f))
}

func testRenameDirs(t *testing.T, f *vfs.FS) {
	ctx := context.Background()
	ok(t, f.MkdirAll(ctx, "a/b/c", 0o755))
	ok(t, f.MkdirAll(ctx, "x", 0o755))
	write(t, f, "a/b/c/f", "F")
	Fails(t, f, fs.ErrInvalid, func() error { return f.Rename(ctx, "a", "a/b/c/a") })
	Fails(t, f, fs.ErrInvalid, func() error { return f.Rename(ctx, "a", "a/z") })
	Fails(t, f, fs.ErrInvalid, func() error { return f.Rename(ctx, "a/b", "a/b/c/d") })

	ok(t, f.Rename(ctx, "a/b", "x/b"))
	if got := read(t, f, "x/b/c/f"); got != "F" {
		t.Fatalf("moved tree: %q", got)
	}
	if n := attr(t, f, "a").Nlink; n != 2 {
		t.Fatalf("old parent nlink %d, want 2", n)
	}
	if n := attr(t, f, "x").Nlink; n != 3 {
		t.Fatalf("new parent nlink %d, want 3", n)
	}
	// A moved directory can then be moved into its old parent's subtree.
	ok(t, f.Rename(ctx, "a", "x/b/c/a"))
	if fi, err := f.Stat(ctx, "x/b/c/a"); err != nil || !fi.IsDir() {
		t.Fatalf("stat: %v %v", fi, err)
	}
	Fails(t, f, fs.ErrInvalid, func() error { return f.Rename(ctx, "x", "x/b/c/a/x") })
	// Renaming through a symlinked parent directory.
	ok(t, f.Symlink(ctx, "x/b", "sb"))
	ok(t, f.Rename(ctx, "sb/c/f", "sb/g"))
	if got := read(t, f, "x/b/g"); got != "F" {
		t.Fatalf("rename through link: %q", got)
	}
}

func testHardLinks(t *testing.T, f *vfs.FS) {
	ctx := context.Background()
	write(t, f, "a", "one")
	ok(t, f.Mkdir(ctx, "d", 0o755))
	ok(t, f.Link(ctx, "a", "d/b"))
	ok(t, f.Link(ctx, "d/b", "c"))
	if a, b := attr(t, f, "a"), attr(t, f, "d/b"); a.Ino != b.Ino || a.Nlink != 3 || b.Nlink != 3 {
		t.Fatalf("links: %+v %+v", a, b)
	}
	write(t, f, "c", "two")
	if got := read(t, f, "a"); got != "two" {
		t.Fatalf("write through another link not seen: %q", got)
	}
	u, err := f.Usage(ctx)
	ok(t, err)
	if u.Entries != 2 || u.Bytes != 3 {
		t.Fatalf("usage counts an inode once: %+v", u)
	}
	ok(t, f.Remove(ctx, "a"))
	if n := attr(t, f, "c").Nlink; n != 2 {
		t.Fatalf("nlink after remove %d", n)
	}
	ok(t, f.Remove(ctx, "c"))
	if got := read(t, f, "d/b"); got != "two" || attr(t, f, "d/b").Nlink != 1 {
		t.Fatalf("last link: %q", got)
	}
	Fails(t, f, fs.ErrPermission, func() error { return f.Link(ctx, "d", "d2") })
	Fails(t, f, fs.ErrExist, func() error { return f.Link(ctx, "d/b", "d") })
	Fails(t, f, fs.ErrNotExist, func() error { return f.Link(ctx, "nope", "x") })
	Fails(t, f, fs.ErrNotExist, func() error { return f.Link(ctx, "d/b", "nope/x") })
	// Link does not follow a final symlink: the link itself gains a name.
	ok(t, f.Symlink(ctx, "d/b", "s"))
	ok(t, f.Link(ctx, "s", "s2"))
	if target, err := f.Readlink(ctx, "s2"); err != nil || target != "d/b" {
		t.Fatalf("linked symlink: %q %v", target, err)
	}
	ok(t, f.Remove(ctx, "d/b"))
	u, err = f.Usage(ctx)
	ok(t, err)
	if u.Entries != 2 || u.Bytes != 0 {
		t.Fatalf("usage after removing every link: %+v", u)
	}
}
