package vfs_test

import (
	"context"
	"errors"
	"io/fs"
	"testing"

	"github.com/forkspace/forkspace/vfs"
)

// TestMknod: FIFOs, sockets and devices are entries with a type, a mode
// and (devices) a number; they link, rename, chmod, fork, diff and count
// as entries, hold no bytes, and refuse to be opened or written.
func TestMknod(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, vfs.Options{})
	f := e.open(e.ws)
	dev := uint64(8<<8 | 1)
	for _, c := range []struct {
		name string
		mode fs.FileMode
		dev  uint64
		typ  string
	}{
		{"fifo", fs.ModeNamedPipe | 0o640, 0, "fifo"},
		{"sock", fs.ModeSocket | 0o600, 0, "socket"},
		{"chr", fs.ModeDevice | fs.ModeCharDevice | 0o660, dev, "chardev"},
		{"blk", fs.ModeDevice | 0o660, dev, "blockdev"},
		{"reg", 0o644, 0, "file"},
	} {
		must(t, f.Mknod(ctx, c.name, c.mode, c.dev))
		fi, err := f.Lstat(ctx, c.name)
		must(t, err)
		a := fi.Sys().(*vfs.Attr)
		if fi.Mode() != c.mode || a.Rdev != c.dev || fi.Size() != 0 || a.Size != 0 {
			t.Errorf("%s: mode %v rdev %d size %d, want %v %d 0", c.name, fi.Mode(), a.Rdev, fi.Size(), c.mode, c.dev)
		}
		if err := f.Mknod(ctx, c.name, c.mode, c.dev); !errors.Is(err, fs.ErrExist) {
			t.Errorf("%s again: %v", c.name, err)
		}
		if c.typ == "file" {
			continue
		}
		if _, err := f.Open(ctx, c.name); !errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("open %s: %v, want errors.ErrUnsupported", c.name, err)
		}
		if err := f.WriteFile(ctx, c.name, []byte("x"), 0o644); !errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("write %s: %v, want errors.ErrUnsupported", c.name, err)
		}
		if _, err := f.ReadFile(ctx, c.name); !errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("read %s: %v, want errors.ErrUnsupported", c.name, err)
		}
	}
	for _, bad := range []fs.FileMode{fs.ModeDir | 0o755, fs.ModeSymlink | 0o777, fs.ModeIrregular} {
		if err := f.Mknod(ctx, "bad", bad, 0); !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("mknod %v: %v, want fs.ErrInvalid", bad, err)
		}
	}
	must(t, f.Link(ctx, "fifo", "fifo2"))
	must(t, f.Rename(ctx, "chr", "chr2"))
	must(t, f.Chmod(ctx, "blk", 0o600))
	if fi, err := f.Lstat(ctx, "fifo2"); err != nil || fi.Sys().(*vfs.Attr).Nlink != 2 {
		t.Errorf("hard link of a FIFO: %v %v", fi, err)
	}
	u, err := f.Usage(ctx)
	must(t, err)
	if u.Bytes != 0 || u.Entries != 5 {
		t.Errorf("usage %+v, want 0 bytes and 5 entries", u)
	}
	must(t, f.Check(ctx))

	// A fork diffs and applies them, device numbers included.
	child := e.fork(f, "child")
	must(t, child.Remove(ctx, "sock"))
	must(t, child.Remove(ctx, "blk"))
	must(t, child.Mknod(ctx, "blk", fs.ModeDevice|0o600, 9<<8))
	must(t, child.Mknod(ctx, "new", fs.ModeNamedPipe|0o600, 0))
	cs, err := vfs.Diff(ctx, f, child, vfs.DiffOptions{})
	must(t, err)
	if got, want := summary(cs), "deleted sock socket 0/0\nmodified blk blockdev 0/0 replaced\nadded new fifo 0/0\n"; got != want {
		t.Errorf("diff:\n%s\nwant:\n%s", got, want)
	}
	checkApplies(t, e, f, child, "applied")
	checkApplies(t, e, child, f, "applied-back")
}
