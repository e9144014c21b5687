package vfstest

import (
	"bytes"
	"context"
	"io/fs"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/vfs"
)

func testAttributes(t *testing.T, f *vfs.FS) {
	ctx := context.Background()
	write(t, f, "f", "x")
	ok(t, f.Symlink(ctx, "f", "l"))
	ok(t, f.Chmod(ctx, "f", 0o751|fs.ModeSetuid|fs.ModeSticky))
	fi, err := f.Stat(ctx, "f")
	ok(t, err)
	if fi.Mode() != 0o751|fs.ModeSetuid|fs.ModeSticky {
		t.Fatalf("chmod: %v", fi.Mode())
	}
	before := attr(t, f, "f")
	ok(t, f.Chown(ctx, "l", 1000, -1))
	a := attr(t, f, "f")
	if a.Uid != 1000 || a.Gid != 0 || !a.Ctime.After(before.Ctime) {
		t.Fatalf("chown: %+v", a)
	}
	ok(t, f.Chown(ctx, "f", -1, 2000))
	if a := attr(t, f, "f"); a.Uid != 1000 || a.Gid != 2000 {
		t.Fatalf("chown gid: %+v", a)
	}
	at := time.Date(2001, 2, 3, 4, 5, 6, 123456789, time.UTC)
	mt := time.Date(2011, 12, 13, 14, 15, 16, 987654321, time.UTC)
	ok(t, f.Chtimes(ctx, "l", at, mt))
	a = attr(t, f, "f")
	if !a.Atime.Equal(at) || !a.Mtime.Equal(mt) {
		t.Fatalf("chtimes: %v %v", a.Atime, a.Mtime)
	}
	ok(t, f.Chtimes(ctx, "f", time.Time{}, time.Time{}))
	if a := attr(t, f, "f"); !a.Atime.Equal(at) || !a.Mtime.Equal(mt) {
		t.Fatalf("zero times changed: %v %v", a.Atime, a.Mtime)
	}
	if fi, _ := f.Stat(ctx, "f"); !fi.ModTime().Equal(mt) {
		t.Fatalf("ModTime %v", fi.ModTime())
	}
	// Writing sets mtime to now.
	write(t, f, "f", "y")
	if a := attr(t, f, "f"); !a.Mtime.After(mt) {
		t.Fatalf("write did not update mtime")
	}
	for _, op := range []func() error{
		func() error { return f.Chmod(ctx, "nope", 0o644) },
		func() error { return f.Chown(ctx, "nope", 1, 1) },
		func() error { return f.Chtimes(ctx, "nope", at, mt) },
	} {
		Fails(t, f, fs.ErrNotExist, op)
	}
}

func testXattrs(t *testing.T, f *vfs.FS) {
	ctx := context.Background()
	write(t, f, "f", "x")
	ok(t, f.Mkdir(ctx, "d", 0o755))
	ok(t, f.Setxattr(ctx, "f", "user.b", []byte("2")))
	ok(t, f.Setxattr(ctx, "f", "user.a", []byte("1")))
	ok(t, f.Setxattr(ctx, "f", "user.a", []byte("one")))
	ok(t, f.Setxattr(ctx, "d", "user.empty", nil))
	names, err := f.Listxattr(ctx, "f")
	ok(t, err)
	if !slices.Equal(names, []string{"user.a", "user.b"}) {
		t.Fatalf("list: %q", names)
	}
	v, err := f.Getxattr(ctx, "f", "user.a")
	ok(t, err)
	if string(v) != "one" {
		t.Fatalf("get: %q", v)
	}
	if v, err := f.Getxattr(ctx, "d", "user.empty"); err != nil || len(v) != 0 {
		t.Fatalf("empty value: %q %v", v, err)
	}
	big := bytes.Repeat([]byte("v"), vfs.MaxXattrValue)
	ok(t, f.Setxattr(ctx, "f", "user.big", big))
	ok(t, f.Removexattr(ctx, "f", "user.b"))
	Fails(t, f, fs.ErrNotExist, func() error { _, err := f.Getxattr(ctx, "f", "user.b"); return err })
	Fails(t, f, fs.ErrNotExist, func() error { return f.Removexattr(ctx, "f", "user.b") })
	Fails(t, f, fs.ErrNotExist, func() error { return f.Setxattr(ctx, "nope", "user.a", nil) })
	Fails(t, f, fs.ErrInvalid, func() error { return f.Setxattr(ctx, "f", "", nil) })
	Fails(t, f, fs.ErrInvalid, func() error { return f.Setxattr(ctx, "f", "a\x00", nil) })
	Fails(t, f, errdefs.ErrNameTooLong, func() error { return f.Setxattr(ctx, "f", strings.Repeat("n", 256), nil) })
	Fails(t, f, fs.ErrInvalid, func() error { return f.Setxattr(ctx, "f", "user.c", append(big, 'x')) })
	// Removing the file drops its attributes.
	ok(t, f.Remove(ctx, "f"))
	write(t, f, "f", "x")
	if names, err := f.Listxattr(ctx, "f"); err != nil || len(names) != 0 {
		t.Fatalf("attributes of a new inode: %q %v", names, err)
	}
}

func testTruncate(t *testing.T, f *vfs.FS) {
	ctx := context.Background()
	write(t, f, "f", "hello world")
	ok(t, f.Truncate(ctx, "f", 5))
	if got := read(t, f, "f"); got != "hello" {
		t.Fatalf("shrink: %q", got)
	}
	ok(t, f.Truncate(ctx, "f", 8))
	if got := read(t, f, "f"); got != "hello\x00\x00\x00" {
		t.Fatalf("grow: %q", got)
	}
	ok(t, f.Truncate(ctx, "f", 3<<20))
	data, err := f.ReadFile(ctx, "f")
	ok(t, err)
	if len(data) != 3<<20 || string(data[:5]) != "hello" || bytes.Count(data[5:], []byte{0}) != len(data)-5 {
		t.Fatalf("grow to 3 MiB: %d bytes", len(data))
	}
	ok(t, f.Truncate(ctx, "f", 0))
	if got := read(t, f, "f"); got != "" {
		t.Fatalf("truncate to 0: %q", got)
	}
	ok(t, f.Mkdir(ctx, "d", 0o755))
	Fails(t, f, fs.ErrInvalid, func() error { return f.Truncate(ctx, "f", -1) })
	Fails(t, f, errdefs.ErrIsDir, func() error { return f.Truncate(ctx, "d", 0) })
	Fails(t, f, fs.ErrNotExist, func() error { return f.Truncate(ctx, "nope", 0) })
}

func testUsage(t *testing.T, f *vfs.FS) {
	ctx := context.Background()
	check := func(bytes, entries int64) {
		t.Helper()
		u, err := f.Usage(ctx)
		ok(t, err)
		if u.Bytes != bytes || u.Entries != entries {
			t.Fatalf("usage %+v, want %d bytes %d entries", u, bytes, entries)
		}
	}
	check(0, 0)
	ok(t, f.MkdirAll(ctx, "a/b", 0o755))
	check(0, 2)
	write(t, f, "a/f", "12345")
	check(5, 3)
	write(t, f, "a/f", "12")
	check(2, 3)
	ok(t, f.Truncate(ctx, "a/f", 100))
	check(100, 3)
	ok(t, f.Symlink(ctx, "f", "a/l"))
	check(100, 4)
	ok(t, f.RemoveAll(ctx, "a"))
	check(0, 0)
}
