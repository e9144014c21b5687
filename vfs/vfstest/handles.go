package vfstest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"testing"
	"testing/fstest"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/vfs"
)

func testHandles(t *testing.T, f *vfs.FS) {
	ctx := context.Background()
	h, err := f.Create(ctx, "f")
	ok(t, err)
	if _, err := h.Write([]byte("hello ")); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Write([]byte("world")); err != nil {
		t.Fatal(err)
	}
	// Unsynced data is the handle's own.
	if got := read(t, f, "f"); got != "" {
		t.Fatalf("unsynced data visible: %q", got)
	}
	fi, err := h.Stat()
	ok(t, err)
	if fi.Size() != 11 {
		t.Fatalf("handle stat size %d", fi.Size())
	}
	buf := make([]byte, 5)
	if n, err := h.ReadAt(buf, 6); err != nil || string(buf[:n]) != "world" {
		t.Fatalf("ReadAt own writes: %q %v", buf[:n], err)
	}
	ok(t, h.Sync())
	if got := read(t, f, "f"); got != "hello world" {
		t.Fatalf("after Sync: %q", got)
	}
	if _, err := h.WriteAt([]byte("W"), 6); err != nil {
		t.Fatal(err)
	}
	if pos, err := h.Seek(0, io.SeekStart); err != nil || pos != 0 {
		t.Fatalf("seek: %d %v", pos, err)
	}
	all, err := io.ReadAll(h)
	ok(t, err)
	if string(all) != "hello World" {
		t.Fatalf("read all: %q", all)
	}
	if pos, err := h.Seek(-5, io.SeekEnd); err != nil || pos != 6 {
		t.Fatalf("seek end: %d %v", pos, err)
	}
	if pos, err := h.Seek(2, io.SeekCurrent); err != nil || pos != 8 {
		t.Fatalf("seek current: %d %v", pos, err)
	}
	if _, err := h.Seek(-100, io.SeekCurrent); !errors.Is(err, fs.ErrInvalid) {
		t.Fatalf("negative seek: %v", err)
	}
	ok(t, h.Truncate(5))
	ok(t, h.Close())
	if got := read(t, f, "f"); got != "hello" {
		t.Fatalf("after Close: %q", got)
	}
	IsPathErr(t, h.Close(), fs.ErrClosed)
	_, err = h.Write([]byte("x"))
	IsPathErr(t, err, fs.ErrClosed)
	_, err = h.Read(buf)
	IsPathErr(t, err, fs.ErrClosed)

	// Two handles: the last committer wins.
	h1, err := f.OpenFile(ctx, "f", vfs.O_RDWR, 0)
	ok(t, err)
	h2, err := f.OpenFile(ctx, "f", vfs.O_WRONLY, 0)
	ok(t, err)
	_, err = h1.WriteAt([]byte("11111"), 0)
	ok(t, err)
	_, err = h2.WriteAt([]byte("22"), 0)
	ok(t, err)
	ok(t, h1.Close())
	ok(t, h2.Close())
	if got := read(t, f, "f"); got != "22llo" {
		t.Fatalf("last committer: %q", got)
	}
	// A reader sees committed writes of others.
	r, err := f.Open(ctx, "f")
	ok(t, err)
	write(t, f, "f", "fresh")
	if n, err := r.ReadAt(buf, 0); n != 5 || string(buf) != "fresh" {
		t.Fatalf("reader after WriteFile: %q %v", buf[:n], err)
	}
	_, err = r.Write([]byte("x"))
	IsPathErr(t, err, fs.ErrPermission)
	ok(t, r.Close())

	// Directories.
	ok(t, f.MkdirAll(ctx, "d/x", 0o755))
	for _, n := range []string{"a", "b", "c"} {
		write(t, f, "d/"+n, n)
	}
	dh, err := f.Open(ctx, "d")
	ok(t, err)
	var names []string
	for {
		ents, err := dh.ReadDir(3)
		for _, e := range ents {
			names = append(names, e.Name())
		}
		if err == io.EOF {
			break
		}
		ok(t, err)
	}
	if len(names) != 4 || names[0] != "a" || names[3] != "x" {
		t.Fatalf("directory handle: %q", names)
	}
	_, err = dh.Read(buf)
	IsPathErr(t, err, errdefs.ErrIsDir)
	ok(t, dh.Close())
	fh, err := f.Open(ctx, "f")
	ok(t, err)
	_, err = fh.ReadDir(-1)
	IsPathErr(t, err, errdefs.ErrNotDir)
	ok(t, fh.Close())
}

func testHandleFlags(t *testing.T, f *vfs.FS) {
	ctx := context.Background()
	write(t, f, "f", "abc")
	ok(t, f.Mkdir(ctx, "d", 0o755))
	Fails(t, f, fs.ErrExist, func() error {
		_, err := f.OpenFile(ctx, "f", vfs.O_RDWR|vfs.O_CREATE|vfs.O_EXCL, 0o644)
		return err
	})
	Fails(t, f, fs.ErrNotExist, func() error { _, err := f.OpenFile(ctx, "nope", vfs.O_RDWR, 0); return err })
	Fails(t, f, fs.ErrNotExist, func() error { _, err := f.Open(ctx, "nope"); return err })
	Fails(t, f, errdefs.ErrIsDir, func() error { _, err := f.OpenFile(ctx, "d", vfs.O_WRONLY, 0); return err })
	Fails(t, f, errdefs.ErrIsDir, func() error {
		_, err := f.OpenFile(ctx, "d", vfs.O_RDWR|vfs.O_CREATE, 0o644)
		return err
	})

	h, err := f.OpenFile(ctx, "new", vfs.O_WRONLY|vfs.O_CREATE|vfs.O_EXCL, 0o600)
	ok(t, err)
	if fi, err := f.Stat(ctx, "new"); err != nil || fi.Mode() != 0o600 {
		t.Fatalf("O_CREATE made %v %v", fi, err)
	}
	_, err = h.Read(make([]byte, 1))
	IsPathErr(t, err, fs.ErrPermission)
	ok(t, h.Close())

	h, err = f.OpenFile(ctx, "f", vfs.O_WRONLY|vfs.O_APPEND, 0)
	ok(t, err)
	_, err = h.Write([]byte("def"))
	ok(t, err)
	_, err = h.WriteAt([]byte("x"), 0)
	IsPathErr(t, err, fs.ErrInvalid)
	_, err = h.Write([]byte("g"))
	ok(t, err)
	ok(t, h.Close())
	if got := read(t, f, "f"); got != "abcdefg" {
		t.Fatalf("append: %q", got)
	}

	// O_TRUNC empties the handle at once and the file at its commit.
	h, err = f.OpenFile(ctx, "f", vfs.O_RDWR|vfs.O_TRUNC, 0)
	ok(t, err)
	if got := read(t, f, "f"); got != "abcdefg" {
		t.Fatalf("O_TRUNC visible before the commit: %q", got)
	}
	if n, err := h.ReadAt(make([]byte, 1), 0); n != 0 || err != io.EOF {
		t.Fatalf("O_TRUNC handle reads %d, %v", n, err)
	}
	_, err = h.Write([]byte("xy"))
	ok(t, err)
	ok(t, h.Close())
	if got := read(t, f, "f"); got != "xy" {
		t.Fatalf("after O_TRUNC write: %q", got)
	}
}

func testSparseFiles(t *testing.T, f *vfs.FS) {
	ctx := context.Background()
	h, err := f.Create(ctx, "sparse")
	ok(t, err)
	const off = 5 << 20
	_, err = h.WriteAt([]byte("tail"), off)
	ok(t, err)
	_, err = h.WriteAt([]byte("head"), 0)
	ok(t, err)
	ok(t, h.Close())
	data, err := f.ReadFile(ctx, "sparse")
	ok(t, err)
	if len(data) != off+4 || string(data[:4]) != "head" || string(data[off:]) != "tail" {
		t.Fatalf("sparse file: %d bytes", len(data))
	}
	if bytes.Count(data[4:off], []byte{0}) != off-4 {
		t.Fatal("hole does not read as zeros")
	}
	r, err := f.Open(ctx, "sparse")
	ok(t, err)
	buf := make([]byte, 8)
	n, err := r.ReadAt(buf, off)
	if n != 4 || err != io.EOF || string(buf[:4]) != "tail" {
		t.Fatalf("read at end: %d %v %q", n, err, buf[:n])
	}
	if _, err := r.ReadAt(buf, off+100); err != io.EOF {
		t.Fatalf("read past end: %v", err)
	}
	ok(t, r.Close())
}

func testOpenUnlinked(t *testing.T, f *vfs.FS) {
	ctx := context.Background()
	write(t, f, "f", "still here")
	r, err := f.Open(ctx, "f")
	ok(t, err)
	w, err := f.OpenFile(ctx, "f", vfs.O_RDWR, 0)
	ok(t, err)
	ok(t, f.Remove(ctx, "f"))
	got, err := io.ReadAll(r)
	ok(t, err)
	if string(got) != "still here" {
		t.Fatalf("read unlinked: %q", got)
	}
	_, err = w.Write([]byte("gone"))
	ok(t, err)
	ok(t, w.Close()) // nothing to record
	if _, err := f.Stat(ctx, "f"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("unlinked file came back: %v", err)
	}
	ok(t, r.Close())
	if u, _ := f.Usage(ctx); u.Entries != 0 || u.Bytes != 0 {
		t.Fatalf("usage: %+v", u)
	}
}

func testIOFS(t *testing.T, f *vfs.FS) {
	ctx := context.Background()
	ok(t, f.MkdirAll(ctx, "a/b/c", 0o755))
	ok(t, f.Mkdir(ctx, "empty", 0o755))
	write(t, f, "top.txt", "top")
	write(t, f, "a/one", "1")
	write(t, f, "a/b/two", "22")
	write(t, f, "a/b/c/big", string(pattern(20<<10)))
	want := []string{"top.txt", "a/one", "a/b/two", "a/b/c/big", "empty"}
	ok(t, fstest.TestFS(f.IOFS(ctx), want...))
	sub, err := f.IOFS(ctx).Sub("a")
	ok(t, err)
	ok(t, fstest.TestFS(sub, "one", "b/two", "b/c/big"))
	sub, err = fs.Sub(sub, "b")
	ok(t, err)
	ok(t, fstest.TestFS(sub, "two", "c/big"))
	if _, err := f.IOFS(ctx).Sub("top.txt"); !errors.Is(err, errdefs.ErrNotDir) {
		t.Fatalf("Sub of a file: %v", err)
	}
}
