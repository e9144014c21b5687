package fusefs_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/forkspace/forkspace/fusefs"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/vfs"
)

// TestAttributes: nanosecond times (utimensat), chmod with special bits,
// chown and lchown reach the workspace; the UID/GID options swap owner 0
// with a host user both ways.
func TestAttributes(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	w := create(t, st, "w", meta.Quota{})
	dir := mount(t, w.FS, fusefs.Options{})
	f := filepath.Join(dir, "f")
	ok(t, os.WriteFile(f, nil, 0o644))
	ts := []unix.Timespec{{Sec: 1_700_000_000, Nsec: 123_456_789}, {Sec: 1_600_000_000, Nsec: 987_654_321}}
	ok(t, unix.UtimesNanoAt(unix.AT_FDCWD, f, ts, 0))
	ok(t, os.Chown(f, 1234, 5678)) // before chmod: chown clears setuid
	ok(t, os.Chmod(f, 0o755|os.ModeSetuid))
	ok(t, os.Symlink("f", filepath.Join(dir, "l")))
	ok(t, os.Lchown(filepath.Join(dir, "l"), 42, 43))
	fi, err := w.Stat(ctx, "f")
	ok(t, err)
	a := fi.Sys().(*vfs.Attr)
	if !a.Atime.Equal(time.Unix(1_700_000_000, 123_456_789)) || !a.Mtime.Equal(time.Unix(1_600_000_000, 987_654_321)) {
		t.Errorf("times %v %v", a.Atime, a.Mtime)
	}
	if a.Mode != 0o755|os.ModeSetuid || a.Uid != 1234 || a.Gid != 5678 {
		t.Errorf("mode %v owner %d:%d", a.Mode, a.Uid, a.Gid)
	}
	li, err := w.Lstat(ctx, "l")
	ok(t, err)
	if la := li.Sys().(*vfs.Attr); la.Uid != 42 || la.Gid != 43 {
		t.Errorf("lchown: %d:%d", la.Uid, la.Gid)
	}
	var s unix.Stat_t
	ok(t, unix.Stat(f, &s))
	if s.Mtim != ts[1] {
		t.Errorf("stat through the mount: mtime %v", s.Mtim)
	}

	mapped := mount(t, w.FS, fusefs.Options{UID: 1000, GID: 1001})
	ok(t, unix.Stat(filepath.Join(mapped, "f"), &s))
	if s.Uid != 1234 || s.Gid != 5678 {
		t.Errorf("an unmapped owner shows as %d:%d", s.Uid, s.Gid)
	}
	ok(t, w.WriteFile(ctx, "g", nil, 0o644))
	ok(t, unix.Stat(filepath.Join(mapped, "g"), &s))
	if s.Uid != 1000 || s.Gid != 1001 {
		t.Errorf("workspace owner 0 shows as %d:%d, want 1000:1001", s.Uid, s.Gid)
	}
	ok(t, os.Chown(filepath.Join(mapped, "g"), 1000, 0))
	gi, err := w.Stat(ctx, "g")
	ok(t, err)
	if ga := gi.Sys().(*vfs.Attr); ga.Uid != 0 || ga.Gid != 1001 {
		t.Errorf("chown through the mapped mount stored %d:%d, want 0:1001", ga.Uid, ga.Gid)
	}
}

// TestSparseAndUnlinked: a file written past a hole reads zeros there and
// stores its logical size; a file unlinked while open stays readable and
// writable through its descriptor, with nlink 0.
func TestSparseAndUnlinked(t *testing.T) {
	ctx := context.Background()
	w, dir := newMount(t)
	f, err := os.Create(filepath.Join(dir, "sparse"))
	ok(t, err)
	_, err = f.WriteAt([]byte("end"), 10<<20)
	ok(t, err)
	ok(t, f.Close())
	data, err := w.ReadFile(ctx, "sparse")
	ok(t, err)
	if len(data) != 10<<20+3 || !bytes.Equal(data[10<<20:], []byte("end")) || bytes.ContainsFunc(data[:10<<20], func(r rune) bool { return r != 0 }) {
		t.Fatalf("sparse file: %d bytes", len(data))
	}

	p := filepath.Join(dir, "gone")
	ok(t, os.WriteFile(p, []byte("kept"), 0o644))
	h, err := os.OpenFile(p, os.O_RDWR, 0)
	ok(t, err)
	ok(t, os.Remove(p))
	_, err = h.WriteAt([]byte("KE"), 0)
	ok(t, err)
	buf := make([]byte, 4)
	_, err = h.ReadAt(buf, 0)
	ok(t, err)
	if string(buf) != "KEpt" {
		t.Errorf("unlinked file reads %q", buf)
	}
	var s syscall.Stat_t
	ok(t, syscall.Fstat(int(h.Fd()), &s))
	if s.Nlink != 0 {
		t.Errorf("unlinked file has nlink %d", s.Nlink)
	}
	ok(t, h.Close())
	if _, err := w.Stat(ctx, "gone"); err == nil {
		t.Error("the unlinked file came back")
	}
}

// TestSetgidDirectory: an entry created in a setgid directory takes the
// directory's group, and a directory created there is setgid too.
func TestSetgidDirectory(t *testing.T) {
	ctx := context.Background()
	w, dir := newMount(t)
	ok(t, os.Mkdir(filepath.Join(dir, "shared"), 0o755))
	ok(t, os.Chown(filepath.Join(dir, "shared"), 0, 4242))
	ok(t, os.Chmod(filepath.Join(dir, "shared"), 0o2775|os.ModeSetgid))
	ok(t, os.WriteFile(filepath.Join(dir, "shared/f"), nil, 0o644))
	ok(t, os.Mkdir(filepath.Join(dir, "shared/d"), 0o755))
	for _, name := range []string{"shared/f", "shared/d"} {
		fi, err := w.Lstat(ctx, name)
		ok(t, err)
		if a := fi.Sys().(*vfs.Attr); a.Gid != 4242 {
			t.Errorf("%s has group %d", name, a.Gid)
		}
		if fi.IsDir() != (fi.Mode()&os.ModeSetgid != 0) {
			t.Errorf("%s: mode %v", name, fi.Mode())
		}
	}
}

// TestMmapShared: bytes written through a shared writable mapping reach
// the workspace once msync and close return; fsync of a directory
// succeeds.
func TestMmapShared(t *testing.T) {
	ctx := context.Background()
	w, dir := newMount(t)
	p := filepath.Join(dir, "m")
	ok(t, os.WriteFile(p, bytes.Repeat([]byte("."), 8192), 0o644))
	f, err := os.OpenFile(p, os.O_RDWR, 0)
	ok(t, err)
	m, err := unix.Mmap(int(f.Fd()), 0, 8192, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_SHARED)
	ok(t, err)
	copy(m[4096:], "mapped")
	ok(t, unix.Msync(m, unix.MS_SYNC))
	ok(t, unix.Munmap(m))
	ok(t, f.Close())
	data, err := w.ReadFile(ctx, "m")
	ok(t, err)
	if string(data[4096:4102]) != "mapped" || len(data) != 8192 {
		t.Fatalf("after msync and close the library reads %q (%d bytes)", data[4096:4102], len(data))
	}
	d, err := os.Open(dir)
	ok(t, err)
	ok(t, d.Sync())
	ok(t, d.Close())
}
