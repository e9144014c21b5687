package fusefs_test

import (
	"bytes"
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/forkspace/forkspace/fusefs"
	"github.com/forkspace/forkspace/internal/citest"
	"github.com/forkspace/forkspace/meta"
)

// TestKillSuidgid: with FUSE_HANDLE_KILLPRIV_V2 the mount clears setuid
// and setgid itself where Linux does: a write, truncate or fallocate by
// a caller without CAP_FSETID (a user, or root without it) clears setuid,
// and setgid when the group may execute; root's write and fallocate keep
// both; a chown of a file clears them whoever calls it, with both ids -1
// too, and a directory keeps its setgid. The mount, the library and the
// kernel's cache all agree.
func TestKillSuidgid(t *testing.T) {
	if os.Geteuid() != 0 {
		citest.Missing(t, "TestKillSuidgid needs root (files written as another user and as root without CAP_FSETID)")
	}
	ctx := context.Background()
	st := openStore(t)
	w := create(t, st, "w", meta.Quota{})
	dir := mount(t, w.FS, fusefs.Options{AllowOther: true})
	ok(t, os.Chmod(filepath.Dir(dir), 0o755)) // reachable by uid 1000
	user := &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 1000, Gid: 1000}}
	run := func(attr *syscall.SysProcAttr, name string, args ...string) {
		t.Helper()
		c := exec.Command(name, args...)
		c.Dir, c.SysProcAttr = dir, attr
		if out, err := c.CombinedOutput(); err != nil {
			t.Fatalf("%s %v: %v: %s", name, args, err, out)
		}
	}
	file := func(name string, mode fs.FileMode) {
		t.Helper()
		p := filepath.Join(dir, name)
		ok(t, os.WriteFile(p, []byte("abc"), 0o644))
		ok(t, os.Chown(p, 1000, 1000))
		ok(t, os.Chmod(p, mode))
	}
	want := func(name string, mode fs.FileMode) {
		t.Helper()
		fi, err := os.Stat(filepath.Join(dir, name))
		ok(t, err)
		if fi.Mode() != mode {
			t.Errorf("%s through the mount: %v, want %v", name, fi.Mode(), mode)
		}
		fi, err = w.Stat(ctx, name)
		ok(t, err)
		if fi.Mode() != mode {
			t.Errorf("%s in the workspace: %v, want %v", name, fi.Mode(), mode)
		}
	}
	const sugid = fs.ModeSetuid | fs.ModeSetgid

	file("user-write", sugid|0o775)
	run(user, "sh", "-c", "printf x >> user-write")
	want("user-write", 0o775)

	file("user-write-nogx", sugid|0o664) // setgid without group execution stays
	run(user, "sh", "-c", "printf x >> user-write-nogx")
	want("user-write-nogx", fs.ModeSetgid|0o664)

	file("root-write", sugid|0o775)
	run(nil, "sh", "-c", "printf x >> root-write")
	want("root-write", sugid|0o775)

	file("root-without-fsetid", sugid|0o775)
	run(nil, "setpriv", "--bounding-set=-fsetid", "sh", "-c", "printf x >> root-without-fsetid")
	want("root-without-fsetid", 0o775)

	file("user-truncate", sugid|0o775)
	run(user, "truncate", "-s", "1", "user-truncate")
	want("user-truncate", 0o775)

	file("user-fallocate", sugid|0o775)
	run(user, "fallocate", "-l", "4096", "user-fallocate")
	want("user-fallocate", 0o775)

	file("root-fallocate", sugid|0o775)
	run(nil, "fallocate", "-l", "4096", "root-fallocate")
	want("root-fallocate", sugid|0o775)

	file("root-without-fsetid-fallocate", sugid|0o775)
	run(nil, "setpriv", "--bounding-set=-fsetid", "fallocate", "-l", "4096", "root-without-fsetid-fallocate")
	want("root-without-fsetid-fallocate", 0o775)

	file("root-chown", sugid|0o775)
	ok(t, os.Chown(filepath.Join(dir, "root-chown"), 2000, 2000))
	want("root-chown", 0o775)

	file("root-chown-none", sugid|0o775) // chown(2) with both ids -1, as ext4
	ok(t, os.Chown(filepath.Join(dir, "root-chown-none"), -1, -1))
	want("root-chown-none", 0o775)

	ok(t, os.Mkdir(filepath.Join(dir, "d"), 0o775))
	ok(t, os.Chmod(filepath.Join(dir, "d"), fs.ModeSetgid|0o775))
	ok(t, os.Chown(filepath.Join(dir, "d"), 2000, 2000))
	want("d", fs.ModeDir|fs.ModeSetgid|0o775)
}

// TestCapabilityCache: the mount remembers that a file has no
// security.capability (the kernel asks before a file's first write and
// every chown), and forgets it when one is set through the mount or any
// other surface.
func TestCapabilityCache(t *testing.T) {
	ctx := context.Background()
	w, dir := newMount(t)
	const name = "security.capability"
	// A valid VFS_CAP_REVISION_2 value: the kernel checks its shape.
	value := []byte{0, 0, 0, 2, 0, 0x20, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	buf := make([]byte, 64)
	absent := func(p string) {
		t.Helper()
		if _, err := unix.Getxattr(p, name, buf); err != unix.ENODATA {
			t.Fatalf("getxattr %s of %s: %v, want ENODATA", name, p, err)
		}
	}
	present := func(p string) {
		t.Helper()
		n, err := unix.Getxattr(p, name, buf)
		if err != nil || !bytes.Equal(buf[:n], value) {
			t.Fatalf("getxattr %s of %s: %x, %v, want %x", name, p, buf[:max(n, 0)], err, value)
		}
	}
	// Through the mount.
	b := filepath.Join(dir, "b")
	ok(t, os.WriteFile(b, []byte("x"), 0o755)) // the kernel asks on the write
	absent(b)
	ok(t, unix.Setxattr(b, name, value, 0))
	present(b)
	ok(t, unix.Removexattr(b, name))
	absent(b)
	// Through the library, on another link of the file: the kernel
	// forgets that name's entry, and keeps the inode (and its node).
	a := filepath.Join(dir, "a")
	ok(t, os.WriteFile(a, []byte("x"), 0o755))
	ok(t, os.Link(a, filepath.Join(dir, "a2")))
	absent(a)
	ok(t, w.Setxattr(ctx, "a2", name, value))
	present(a)
	// Just created (os.Create: O_CREAT|O_TRUNC, no O_EXCL): known to
	// have none from its creation on.
	c := filepath.Join(dir, "c")
	f, err := os.Create(c)
	ok(t, err)
	defer f.Close()
	absent(c)
	ok(t, w.Setxattr(ctx, "c", name, value))
	present(c)
}
