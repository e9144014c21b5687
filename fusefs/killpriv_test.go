package fusefs_test

import (
	"context"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/forkspace/forkspace/fusefs"
	"github.com/forkspace/forkspace/meta"
)

// TestKillSuidgid: with FUSE_HANDLE_KILLPRIV_V2 the mount clears setuid
// and setgid itself where Linux does: a write, truncate or fallocate by
// a caller without CAP_FSETID (a user, or root without it) clears setuid,
// and setgid when the group may execute; root's write keeps both; a
// chown of a file clears them whoever calls it, and a directory keeps
// its setgid. The mount, the library and the kernel's cache all agree.
func TestKillSuidgid(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root (files written as another user and as root without CAP_FSETID)")
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
	run(nil, "capsh", "--drop=cap_fsetid", "--", "-c", "printf x >> root-without-fsetid")
	want("root-without-fsetid", 0o775)

	file("user-truncate", sugid|0o775)
	run(user, "truncate", "-s", "1", "user-truncate")
	want("user-truncate", 0o775)

	file("user-fallocate", sugid|0o775)
	run(user, "fallocate", "-l", "4096", "user-fallocate")
	want("user-fallocate", 0o775)

	file("root-chown", sugid|0o775)
	ok(t, os.Chown(filepath.Join(dir, "root-chown"), 2000, 2000))
	want("root-chown", 0o775)

	ok(t, os.Mkdir(filepath.Join(dir, "d"), 0o775))
	ok(t, os.Chmod(filepath.Join(dir, "d"), fs.ModeSetgid|0o775))
	ok(t, os.Chown(filepath.Join(dir, "d"), 2000, 2000))
	want("d", fs.ModeDir|fs.ModeSetgid|0o775)
}
