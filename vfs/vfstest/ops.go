package vfstest

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"slices"
	"strings"
	"testing"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/vfs"
)

// badPaths are rejected by every operation, with the error they wrap.
var badPaths = []struct {
	path string
	err  error
}{
	{"", fs.ErrInvalid},
	{"/etc/passwd", fs.ErrInvalid},
	{"../x", fs.ErrInvalid},
	{"a/../../x", fs.ErrInvalid},
	{"a/./b", fs.ErrInvalid},
	{"a//b", fs.ErrInvalid},
	{"a/", fs.ErrInvalid},
	{"a\x00b", fs.ErrInvalid},
	{strings.Repeat("n", vfs.MaxNameLen+1), errdefs.ErrNameTooLong},
	{strings.Repeat("d/", vfs.MaxPathLen/2) + "f", errdefs.ErrNameTooLong},
}

func testBadPaths(t *testing.T, f *vfs.FS) {
	ctx := context.Background()
	write(t, f, "a", "x")
	ops := map[string]func(p string) error{
		"stat":      func(p string) error { _, err := f.Stat(ctx, p); return err },
		"lstat":     func(p string) error { _, err := f.Lstat(ctx, p); return err },
		"readdir":   func(p string) error { _, err := f.ReadDir(ctx, p); return err },
		"readfile":  func(p string) error { _, err := f.ReadFile(ctx, p); return err },
		"writefile": func(p string) error { return f.WriteFile(ctx, p, []byte("x"), 0o644) },
		"openfile": func(p string) error {
			_, err := f.OpenFile(ctx, p, vfs.O_RDWR|vfs.O_CREATE, 0o644)
			return err
		},
		"mkdir":     func(p string) error { return f.Mkdir(ctx, p, 0o755) },
		"mkdirall":  func(p string) error { return f.MkdirAll(ctx, p, 0o755) },
		"remove":    func(p string) error { return f.Remove(ctx, p) },
		"removeall": func(p string) error { return f.RemoveAll(ctx, p) },
		"rename":    func(p string) error { return f.Rename(ctx, "a", p) },
		"renamesrc": func(p string) error { return f.Rename(ctx, p, "b") },
		"symlink":   func(p string) error { return f.Symlink(ctx, "a", p) },
		"readlink":  func(p string) error { _, err := f.Readlink(ctx, p); return err },
		"link":      func(p string) error { return f.Link(ctx, "a", p) },
		"chmod":     func(p string) error { return f.Chmod(ctx, p, 0o600) },
		"chown":     func(p string) error { return f.Chown(ctx, p, 1, 1) },
		"truncate":  func(p string) error { return f.Truncate(ctx, p, 0) },
		"setxattr":  func(p string) error { return f.Setxattr(ctx, p, "user.a", nil) },
		"getxattr":  func(p string) error { _, err := f.Getxattr(ctx, p, "user.a"); return err },
	}
	for name, op := range ops {
		for _, bp := range badPaths {
			t.Run(name, func(t *testing.T) { Fails(t, f, bp.err, func() error { return op(bp.path) }) })
		}
	}
}

func testWriteRead(t *testing.T, f *vfs.FS) {
	ctx := context.Background()
	sizes := []int{0, 1, 100, 16 << 10, 64<<10 + 1, 300 << 10}
	for _, n := range sizes {
		data := pattern(n)
		ok(t, f.WriteFile(ctx, "f", data, 0o640))
		got, err := f.ReadFile(ctx, "f")
		ok(t, err)
		if !bytes.Equal(got, data) {
			t.Fatalf("size %d: read back %d different bytes", n, len(got))
		}
		fi, err := f.Stat(ctx, "f")
		ok(t, err)
		if fi.Size() != int64(n) || fi.Mode() != 0o640 || fi.Name() != "f" || fi.IsDir() {
			t.Fatalf("stat after writing %d bytes: %v", n, fs.FormatFileInfo(fi))
		}
	}
	ok(t, f.Mkdir(ctx, "d", 0o755))
	Fails(t, f, errdefs.ErrIsDir, func() error { return f.WriteFile(ctx, "d", []byte("x"), 0o644) })
	Fails(t, f, errdefs.ErrIsDir, func() error { _, err := f.ReadFile(ctx, "d"); return err })
	Fails(t, f, fs.ErrNotExist, func() error { _, err := f.ReadFile(ctx, "missing"); return err })
	Fails(t, f, fs.ErrNotExist, func() error { return f.WriteFile(ctx, "missing/f", nil, 0o644) })
	Fails(t, f, errdefs.ErrNotDir, func() error { return f.WriteFile(ctx, "f/g", nil, 0o644) })
	Fails(t, f, errdefs.ErrNotDir, func() error { _, err := f.Stat(ctx, "f/g"); return err })
	fi, err := f.Stat(ctx, ".")
	ok(t, err)
	if !fi.IsDir() || fi.Name() != "." {
		t.Fatalf("stat root: %v", fs.FormatFileInfo(fi))
	}
}

// pattern returns n deterministic bytes.
func pattern(n int) []byte {
	b := make([]byte, n)
	x := uint32(n) | 1
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

func testMkdir(t *testing.T, f *vfs.FS) {
	ctx := context.Background()
	ok(t, f.Mkdir(ctx, "a", 0o750))
	fi, err := f.Stat(ctx, "a")
	ok(t, err)
	if !fi.IsDir() || fi.Mode().Perm() != 0o750 || fi.Mode()&fs.ModeDir == 0 {
		t.Fatalf("stat a: %v", fs.FormatFileInfo(fi))
	}
	if n := attr(t, f, "a").Nlink; n != 2 {
		t.Fatalf("empty directory nlink %d, want 2", n)
	}
	ok(t, f.Mkdir(ctx, "a/b", 0o755))
	ok(t, f.Mkdir(ctx, "a/c", 0o755))
	write(t, f, "a/file", "x")
	if n := attr(t, f, "a").Nlink; n != 4 {
		t.Fatalf("nlink with two subdirectories %d, want 4", n)
	}
	if n := attr(t, f, ".").Nlink; n != 3 {
		t.Fatalf("root nlink %d, want 3", n)
	}
	Fails(t, f, fs.ErrExist, func() error { return f.Mkdir(ctx, "a", 0o755) })
	Fails(t, f, fs.ErrExist, func() error { return f.Mkdir(ctx, "a/file", 0o755) })
	Fails(t, f, fs.ErrExist, func() error { return f.Mkdir(ctx, ".", 0o755) })
	Fails(t, f, fs.ErrNotExist, func() error { return f.Mkdir(ctx, "x/y", 0o755) })
	Fails(t, f, errdefs.ErrNotDir, func() error { return f.Mkdir(ctx, "a/file/y", 0o755) })

	ok(t, f.MkdirAll(ctx, "p/q/r", 0o700))
	ok(t, f.MkdirAll(ctx, "p/q/r", 0o700))
	ok(t, f.MkdirAll(ctx, ".", 0o700))
	if fi, err := f.Stat(ctx, "p/q/r"); err != nil || !fi.IsDir() || fi.Mode().Perm() != 0o700 {
		t.Fatalf("MkdirAll: %v %v", fi, err)
	}
	Fails(t, f, errdefs.ErrNotDir, func() error { return f.MkdirAll(ctx, "a/file/y/z", 0o755) })
	Fails(t, f, errdefs.ErrNotDir, func() error { return f.MkdirAll(ctx, "a/file", 0o755) })

	// Creating an entry updates the directory's mtime and ctime.
	before := attr(t, f, "p")
	ok(t, f.Mkdir(ctx, "p/new", 0o755))
	after := attr(t, f, "p")
	if !after.Mtime.After(before.Mtime) || !after.Ctime.After(before.Ctime) {
		t.Fatalf("parent times not updated: %v -> %v", before.Mtime, after.Mtime)
	}
}

func testReadDir(t *testing.T, f *vfs.FS) {
	ctx := context.Background()
	names := []string{"zeta", "alpha", "Mid", "b.txt", "a-b", "ünï"}
	for i, n := range names {
		if i%2 == 0 {
			ok(t, f.Mkdir(ctx, n, 0o755))
		} else {
			write(t, f, n, n)
		}
	}
	ents, err := f.ReadDir(ctx, ".")
	ok(t, err)
	var got []string
	for _, e := range ents {
		got = append(got, e.Name())
		info, err := e.Info()
		ok(t, err)
		st, err := f.Lstat(ctx, e.Name())
		ok(t, err)
		if e.IsDir() != st.IsDir() || e.Type() != st.Mode().Type() || info.Mode() != st.Mode() || info.Size() != st.Size() {
			t.Fatalf("entry %s: %v vs stat %v", e.Name(), fs.FormatDirEntry(e), fs.FormatFileInfo(st))
		}
	}
	want := slices.Sorted(slices.Values(names))
	if !slices.Equal(got, want) {
		t.Fatalf("ReadDir = %q, want %q", got, want)
	}
	if ents, err := f.ReadDir(ctx, "zeta"); err != nil || len(ents) != 0 {
		t.Fatalf("empty dir: %v %v", ents, err)
	}
	Fails(t, f, errdefs.ErrNotDir, func() error { _, err := f.ReadDir(ctx, "alpha"); return err })
	Fails(t, f, fs.ErrNotExist, func() error { _, err := f.ReadDir(ctx, "nope"); return err })
}

func testRemove(t *testing.T, f *vfs.FS) {
	ctx := context.Background()
	write(t, f, "f", "x")
	ok(t, f.MkdirAll(ctx, "d/e", 0o755))
	ok(t, f.Symlink(ctx, "d", "link"))
	Fails(t, f, errdefs.ErrNotEmpty, func() error { return f.Remove(ctx, "d") })
	Fails(t, f, fs.ErrNotExist, func() error { return f.Remove(ctx, "nope") })
	Fails(t, f, fs.ErrNotExist, func() error { return f.Remove(ctx, "nope/x") })
	Fails(t, f, fs.ErrInvalid, func() error { return f.Remove(ctx, ".") })
	ok(t, f.Remove(ctx, "link")) // the link, not its target
	if _, err := f.Stat(ctx, "d"); err != nil {
		t.Fatalf("link target removed: %v", err)
	}
	ok(t, f.Remove(ctx, "d/e"))
	if n := attr(t, f, "d").Nlink; n != 2 {
		t.Fatalf("nlink after removing subdirectory %d, want 2", n)
	}
	ok(t, f.Remove(ctx, "d"))
	ok(t, f.Remove(ctx, "f"))
	if ents, err := f.ReadDir(ctx, "."); err != nil || len(ents) != 0 {
		t.Fatalf("after removing everything: %v %v", ents, err)
	}
	if n := attr(t, f, ".").Nlink; n != 2 {
		t.Fatalf("root nlink %d, want 2", n)
	}
}

func testRemoveAll(t *testing.T, f *vfs.FS) {
	ctx := context.Background()
	ok(t, f.MkdirAll(ctx, "t/a/b/c", 0o755))
	for i := range 20 {
		write(t, f, "t/a/f"+string(rune('a'+i)), "data")
	}
	write(t, f, "t/a/b/c/deep", "deep")
	write(t, f, "keep", "keep")
	ok(t, f.Link(ctx, "t/a/b/c/deep", "deeplink"))
	ok(t, f.Symlink(ctx, "../keep", "t/sym"))
	ok(t, f.RemoveAll(ctx, "t"))
	ok(t, f.RemoveAll(ctx, "t"))
	ok(t, f.RemoveAll(ctx, "missing/x"))
	if _, err := f.Stat(ctx, "t"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("stat removed tree: %v", err)
	}
	if got := read(t, f, "deeplink"); got != "deep" {
		t.Fatalf("hard link outside removed tree: %q", got)
	}
	if a := attr(t, f, "deeplink"); a.Nlink != 1 {
		t.Fatalf("nlink %d, want 1", a.Nlink)
	}
	if got := read(t, f, "keep"); got != "keep" {
		t.Fatalf("symlink target removed")
	}
	u, err := f.Usage(ctx)
	ok(t, err)
	if u.Entries != 2 || u.Bytes != 8 {
		t.Fatalf("usage after RemoveAll: %+v", u)
	}
	Fails(t, f, fs.ErrInvalid, func() error { return f.RemoveAll(ctx, ".") })
}
