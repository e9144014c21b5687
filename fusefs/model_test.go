package fusefs_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"testing/fstest"

	"golang.org/x/sys/unix"
	"pgregory.net/rapid"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/fusefs"
	"github.com/forkspace/forkspace/fusefs/fusetest"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/vfs"
)

// TestMountMatchesVFS is vfs's conformance run again through the mount:
// random operations go through system calls on a mounted workspace and
// through the library on a reference workspace (vfs is the model, its
// own conformance suite vfstest checks it); each must end with the same
// errno (fusefs.Errno of the library's error), and after each step the
// tree seen through the mount (os calls, so the kernel's caches count),
// the mounted workspace seen through the library, and the reference are
// the same. testing/fstest.TestFS checks the mount as an fs.FS at the
// end.
func TestMountMatchesVFS(t *testing.T) {
	fusetest.Require(t)
	ctx := context.Background()
	st := openStore(t)
	dir := mountAll(t, st, fusefs.Options{})
	n := 0
	rapid.Check(t, func(rt *rapid.T) {
		n++
		m := &model{
			rt:  rt,
			ctx: ctx,
			mnt: create(t, st, fmt.Sprintf("m%d", n), meta.Quota{}),
			ref: create(t, st, fmt.Sprintf("r%d", n), meta.Quota{}),
		}
		m.dir = filepath.Join(dir, m.mnt.Name())
		for range rapid.IntRange(5, 40).Draw(rt, "steps") {
			m.step()
			m.compare()
		}
		// (Only without symbolic links, which may loop or dangle.)
		if files, links := m.files(); !links && len(files) > 0 {
			if err := fstest.TestFS(os.DirFS(m.dir), files...); err != nil {
				rt.Fatalf("fstest: %v", err)
			}
		}
	})
}

type model struct {
	rt       *rapid.T
	ctx      context.Context
	mnt, ref *forkspace.Workspace
	dir      string
}

// path draws a path of depth 1 to 3 over a few names.
func (m *model) path(label string) string {
	parts := make([]string, rapid.IntRange(1, 3).Draw(m.rt, label+"Depth"))
	for i := range parts {
		parts[i] = rapid.SampledFrom([]string{"a", "b", "c"}).Draw(m.rt, label)
	}
	return strings.Join(parts, "/")
}

// step applies one random operation to both sides and compares errnos.
func (m *model) step() {
	p, q := m.path("p"), m.path("q")
	host, hq := filepath.Join(m.dir, p), filepath.Join(m.dir, q)
	data := []byte(strings.Repeat(rapid.SampledFrom([]string{"x", "yz", "\n"}).Draw(m.rt, "byte"), rapid.IntRange(0, 40).Draw(m.rt, "len")))
	ref, ctx := m.ref.FS, m.ctx
	var got, want error
	switch op := rapid.SampledFrom([]string{"write", "writeat", "mkdir", "remove", "rename", "noreplace", "exchange", "link", "symlink", "chmod", "truncate", "setxattr", "removexattr"}).Draw(m.rt, "op"); op {
	case "write":
		got, want = os.WriteFile(host, data, 0o644), ref.WriteFile(ctx, p, data, 0o644)
	case "writeat":
		off := int64(rapid.IntRange(0, 50).Draw(m.rt, "off"))
		got = writeAt(host, data, off)
		want = func() error {
			f, err := ref.OpenFile(ctx, p, vfs.O_RDWR, 0)
			if err != nil {
				return err
			}
			_, err = f.WriteAt(data, off)
			return errors.Join(err, f.Close())
		}()
	case "mkdir":
		got, want = os.Mkdir(host, 0o755), ref.Mkdir(ctx, p, 0o755)
	case "remove":
		// rm uses rmdir(2) for a directory, unlink(2) for the rest.
		if fi, err := ref.Lstat(ctx, p); err == nil && fi.IsDir() {
			got = unix.Rmdir(host)
		} else {
			got = unix.Unlink(host)
		}
		want = ref.Remove(ctx, p)
	case "rename":
		got, want = unix.Rename(host, hq), ref.Rename(ctx, p, q) // os.Rename refuses a directory target itself
	case "noreplace":
		got, want = unix.Renameat2(unix.AT_FDCWD, host, unix.AT_FDCWD, hq, unix.RENAME_NOREPLACE), ref.RenameNoReplace(ctx, p, q)
	case "exchange":
		got, want = unix.Renameat2(unix.AT_FDCWD, host, unix.AT_FDCWD, hq, unix.RENAME_EXCHANGE), ref.RenameExchange(ctx, p, q)
	case "link":
		got, want = os.Link(host, hq), ref.Link(ctx, p, q)
	case "symlink":
		target := rapid.SampledFrom([]string{"a", "b", "a/b", "c/a"}).Draw(m.rt, "target")
		got, want = os.Symlink(target, hq), ref.Symlink(ctx, target, q)
	case "chmod":
		mode := rapid.SampledFrom([]fs.FileMode{0o600, 0o644, 0o755, 0o700}).Draw(m.rt, "mode")
		got, want = os.Chmod(host, mode), ref.Chmod(ctx, p, mode)
	case "truncate":
		size := int64(rapid.IntRange(0, 60).Draw(m.rt, "size"))
		got, want = os.Truncate(host, size), ref.Truncate(ctx, p, size)
	case "setxattr":
		got, want = unix.Setxattr(host, "user.k", data, 0), ref.Setxattr(ctx, p, "user.k", data)
	case "removexattr":
		got = unix.Removexattr(host, "user.k")
		want = ref.Removexattr(ctx, p, "user.k")
		if errors.Is(want, fs.ErrNotExist) {
			if _, err := ref.Stat(ctx, p); err == nil {
				want = syscall.ENODATA // the file exists, the attribute does not
			}
		}
	}
	if g, w := errnoOf(got), fusefs.Errno(want); g != w {
		m.rt.Fatalf("mount: %v (%v); library: %v (%v)", got, g, want, w)
	}
}

// writeAt writes data at off of an existing file through the mount.
func writeAt(name string, data []byte, off int64) error {
	f, err := os.OpenFile(name, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	_, err = f.WriteAt(data, off)
	return errors.Join(err, f.Close())
}

// errnoOf is the errno of a system call's error (0 for nil).
func errnoOf(err error) syscall.Errno {
	var e syscall.Errno
	if err == nil || !errors.As(err, &e) {
		return 0
	}
	return e
}

// compare requires the mount (through the kernel), the mounted workspace
// and the reference to hold the same tree.
func (m *model) compare() {
	want := renderVFS(m.rt, m.ctx, m.ref.FS)
	if got := renderVFS(m.rt, m.ctx, m.mnt.FS); !maps.Equal(got, want) {
		m.rt.Fatalf("mounted workspace differs from the reference:\n got  %v\n want %v", got, want)
	}
	if got := renderHost(m.rt, m.dir); !maps.Equal(got, want) {
		m.rt.Fatalf("the mount differs from the reference:\n got  %v\n want %v", got, want)
	}
}

// render describes an entry: type and permissions, size, link count,
// contents or target, and the user.k attribute.
func render(mode fs.FileMode, size int64, nlink uint64, body string, xattr []byte, hasX bool) string {
	s := fmt.Sprintf("%v size=%d nlink=%d %q", mode, size, nlink, body)
	if hasX {
		s += fmt.Sprintf(" user.k=%q", xattr)
	}
	return s
}

func renderVFS(t *rapid.T, ctx context.Context, f *vfs.FS) map[string]string {
	out := map[string]string{}
	var walk func(p string)
	walk = func(p string) {
		ents, err := f.ReadDir(ctx, p)
		if err != nil {
			t.Fatalf("readdir %s: %v", p, err)
		}
		for _, e := range ents {
			c := join(p, e.Name())
			fi, err := f.Lstat(ctx, c)
			if err != nil {
				t.Fatalf("lstat %s: %v", c, err)
			}
			var body string
			var x []byte
			hasX := false
			switch {
			case fi.Mode().IsRegular():
				b, err := f.ReadFile(ctx, c)
				if err != nil {
					t.Fatalf("read %s: %v", c, err)
				}
				body = string(b)
			case fi.Mode()&fs.ModeSymlink != 0:
				body, _ = f.Readlink(ctx, c)
			}
			if fi.Mode()&fs.ModeSymlink == 0 {
				x, err = f.Getxattr(ctx, c, "user.k")
				hasX = err == nil
			}
			out[c] = render(fi.Mode(), fi.Size(), uint64(fi.Sys().(*vfs.Attr).Nlink), body, x, hasX)
			if fi.IsDir() {
				walk(c)
			}
		}
	}
	walk(".")
	return out
}

func renderHost(t *rapid.T, dir string) map[string]string {
	out := map[string]string{}
	var walk func(p string)
	walk = func(p string) {
		ents, err := os.ReadDir(filepath.Join(dir, p))
		if err != nil {
			t.Fatalf("readdir %s: %v", p, err)
		}
		for _, e := range ents {
			c := join(p, e.Name())
			h := filepath.Join(dir, c)
			fi, err := os.Lstat(h)
			if err != nil {
				t.Fatalf("lstat %s: %v", c, err)
			}
			var body string
			switch {
			case fi.Mode().IsRegular():
				b, err := os.ReadFile(h)
				if err != nil {
					t.Fatalf("read %s: %v", c, err)
				}
				body = string(b)
			case fi.Mode()&fs.ModeSymlink != 0:
				body, _ = os.Readlink(h)
			}
			x, hasX := []byte(nil), false
			if fi.Mode()&fs.ModeSymlink == 0 {
				buf := make([]byte, 256)
				if n, err := unix.Getxattr(h, "user.k", buf); err == nil {
					x, hasX = buf[:n], true
				}
			}
			out[c] = render(fi.Mode(), fi.Size(), uint64(fi.Sys().(*syscall.Stat_t).Nlink), body, x, hasX)
			if fi.IsDir() {
				walk(c)
			}
		}
	}
	walk(".")
	return out
}

func join(dir, name string) string {
	if dir == "." {
		return name
	}
	return dir + "/" + name
}

// files lists the regular files of the mounted workspace (for fstest)
// and reports whether it holds symbolic links.
func (m *model) files() (files []string, links bool) {
	for p, s := range renderVFS(m.rt, m.ctx, m.mnt.FS) {
		switch s[0] {
		case '-':
			files = append(files, p)
		case 'L':
			links = true
		}
	}
	slices.Sort(files)
	return files, links
}
