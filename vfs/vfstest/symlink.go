package vfstest

import (
	"context"
	"errors"
	"io/fs"
	"strings"
	"testing"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/vfs"
)

func testSymlinks(t *testing.T, f *vfs.FS) {
	ctx := context.Background()
	ok(t, f.MkdirAll(ctx, "d/e", 0o755))
	write(t, f, "d/e/f", "F")
	ok(t, f.Symlink(ctx, "e/f", "d/rel"))
	ok(t, f.Symlink(ctx, "/d/e", "abs"))
	ok(t, f.Symlink(ctx, "d", "dl"))
	ok(t, f.Symlink(ctx, "missing", "dangling"))

	if got := read(t, f, "d/rel"); got != "F" {
		t.Fatalf("relative link: %q", got)
	}
	if got := read(t, f, "abs/f"); got != "F" {
		t.Fatalf("absolute link as directory: %q", got)
	}
	if got := read(t, f, "dl/rel"); got != "F" {
		t.Fatalf("link through linked directory: %q", got)
	}
	fi, err := f.Stat(ctx, "d/rel")
	ok(t, err)
	li, err := f.Lstat(ctx, "d/rel")
	ok(t, err)
	if !fi.Mode().IsRegular() || fi.Name() != "rel" || li.Mode()&fs.ModeSymlink == 0 || li.Size() != 3 {
		t.Fatalf("stat %v lstat %v", fs.FormatFileInfo(fi), fs.FormatFileInfo(li))
	}
	if target, err := f.Readlink(ctx, "abs"); err != nil || target != "/d/e" {
		t.Fatalf("readlink: %q %v", target, err)
	}
	ents, err := f.ReadDir(ctx, "dl")
	ok(t, err)
	if len(ents) != 2 {
		t.Fatalf("readdir through link: %v", ents)
	}
	Fails(t, f, fs.ErrNotExist, func() error { _, err := f.Stat(ctx, "dangling"); return err })
	if _, err := f.Lstat(ctx, "dangling"); err != nil {
		t.Fatalf("lstat dangling: %v", err)
	}
	// Writing through a dangling link creates its target.
	write(t, f, "dangling", "new")
	if got := read(t, f, "missing"); got != "new" {
		t.Fatalf("created through link: %q", got)
	}
	Fails(t, f, fs.ErrInvalid, func() error { _, err := f.Readlink(ctx, "d"); return err })
	Fails(t, f, fs.ErrExist, func() error { return f.Symlink(ctx, "x", "d") })
	Fails(t, f, fs.ErrExist, func() error { return f.Symlink(ctx, "x", "dangling") })
	Fails(t, f, fs.ErrInvalid, func() error { return f.Symlink(ctx, "", "empty") })
	Fails(t, f, fs.ErrInvalid, func() error { return f.Symlink(ctx, "a\x00b", "nul") })
	Fails(t, f, fs.ErrInvalid, func() error { return f.Symlink(ctx, strings.Repeat("a", vfs.MaxPathLen+1), "long") })
	Fails(t, f, fs.ErrExist, func() error {
		_, err := f.OpenFile(ctx, "dangling", vfs.O_RDWR|vfs.O_CREATE|vfs.O_EXCL, 0o644)
		return err
	})
	// Chmod follows the link.
	ok(t, f.Chmod(ctx, "d/rel", 0o600))
	if fi, _ := f.Lstat(ctx, "d/rel"); fi.Mode().Perm() != 0o777 {
		t.Fatalf("link mode changed: %v", fi.Mode())
	}
	if fi, _ := f.Stat(ctx, "d/e/f"); fi.Mode().Perm() != 0o600 {
		t.Fatalf("target mode: %v", fi.Mode())
	}
	// Loops.
	ok(t, f.Symlink(ctx, "loop2", "loop1"))
	ok(t, f.Symlink(ctx, "loop1", "loop2"))
	ok(t, f.Symlink(ctx, "self/x", "self"))
	for _, p := range []string{"loop1", "loop2/x", "self"} {
		Fails(t, f, errdefs.ErrLoop, func() error { _, err := f.Stat(ctx, p); return err })
		Fails(t, f, errdefs.ErrLoop, func() error { return f.WriteFile(ctx, p, nil, 0o644) })
	}
	if _, err := f.Lstat(ctx, "loop1"); err != nil {
		t.Fatalf("lstat loop: %v", err)
	}
	ok(t, f.Remove(ctx, "loop1"))
	// A chain of 40 links resolves; 41 do not.
	ok(t, f.Symlink(ctx, "d/e/f", "chain0"))
	for i := 1; i <= 40; i++ {
		ok(t, f.Symlink(ctx, "chain"+itoa(i-1), "chain"+itoa(i)))
	}
	if got := read(t, f, "chain39"); got != "F" {
		t.Fatalf("40 hops: %q", got)
	}
	Fails(t, f, errdefs.ErrLoop, func() error { _, err := f.ReadFile(ctx, "chain40"); return err })
}

func itoa(i int) string {
	if i < 10 {
		return string(rune('0' + i))
	}
	return itoa(i/10) + string(rune('0'+i%10))
}

// testSymlinkEscapes checks that no link leaves the workspace: targets
// resolve as if the workspace root were the filesystem root.
func testSymlinkEscapes(t *testing.T, f *vfs.FS) {
	ctx := context.Background()
	ok(t, f.MkdirAll(ctx, "a/b", 0o755))
	targets := []string{"../../etc/passwd", "/etc/passwd", "../../../../../../etc/passwd", "/../../etc/passwd", "../b/../../../etc/passwd"}
	for i, target := range targets {
		name := "a/b/l" + itoa(i)
		ok(t, f.Symlink(ctx, target, name))
		if _, err := f.ReadFile(ctx, name); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("%s -> %s: %v, want not found inside the workspace", name, target, err)
		}
	}
	ok(t, f.MkdirAll(ctx, "etc", 0o755))
	write(t, f, "etc/passwd", "workspace passwd")
	for i, target := range targets {
		name := "a/b/l" + itoa(i)
		if got := read(t, f, name); got != "workspace passwd" {
			t.Fatalf("%s -> %s read %q", name, target, got)
		}
	}
	for i, target := range targets {
		// Writing through the link writes the workspace's file.
		name := "a/b/l" + itoa(i)
		write(t, f, name, "w"+itoa(i))
		if got := read(t, f, "etc/passwd"); got != "w"+itoa(i) {
			t.Fatalf("write through %s: %q", target, got)
		}
	}
	ok(t, f.Symlink(ctx, "..", "up"))
	ok(t, f.Symlink(ctx, "/", "top"))
	for _, p := range []string{"up", "up/up", "top", "top/top/up"} {
		fi, err := f.Stat(ctx, p)
		ok(t, err)
		if a := fi.Sys().(*vfs.Attr); a.Ino != attr(t, f, ".").Ino {
			t.Fatalf("%s resolves to inode %d, not the root", p, a.Ino)
		}
	}
	if got := read(t, f, "up/up/etc/passwd"); got != "w4" {
		t.Fatalf("dotdot link: %q", got)
	}
}
