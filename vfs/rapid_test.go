package vfs_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/vfs"
)

// TestModel runs random operations against an FS and, as the model, a
// plain host directory, and compares the outcome of each operation and the
// whole trees.
func TestModel(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, vfs.Options{})
	n := 0
	rapid.Check(t, func(rt *rapid.T) {
		n++
		m := &model{rt: rt, e: e, host: t.TempDir()}
		root, nodes, err := vfs.NewTree(ctx, e.deps, time.Now())
		must(rt, err)
		m.ws = &meta.Workspace{ID: fmt.Sprintf("model-%d", n), Name: fmt.Sprintf("model-%d", n), Root: root}
		e.createWorkspace(m.ws, nodes)
		m.f, err = vfs.Open(ctx, e.deps, m.ws, vfs.Options{FoldRows: rapid.IntRange(5, 200).Draw(rt, "foldRows")})
		must(rt, err)
		defer func() { _ = m.f.Close() }()
		steps := rapid.IntRange(20, 120).Draw(rt, "steps")
		for i := range steps {
			m.step()
			if i%10 == 9 {
				m.compare()
			}
		}
		m.compare()
	})
}

type model struct {
	rt   *rapid.T
	e    *env
	ws   *meta.Workspace
	f    *vfs.FS
	host string
}

var names = []string{"a", "b", "c"}

// mutate applies one random operation to the FS alone, ignoring failures.
func (m *model) mutate() {
	ctx := context.Background()
	p, q := m.path("path"), m.path("to")
	data := []byte(strings.Repeat("x\n", rapid.IntRange(0, 5).Draw(m.rt, "lines")))
	var err error
	switch rapid.SampledFrom([]string{"mkdirall", "write", "truncate", "remove", "removeall", "rename", "symlink", "link", "chmod", "chown", "setxattr", "mknod"}).Draw(m.rt, "op") {
	case "mkdirall":
		err = m.f.MkdirAll(ctx, p, 0o755)
	case "write":
		err = m.f.WriteFile(ctx, p, data, 0o644)
	case "truncate":
		err = m.f.Truncate(ctx, p, int64(len(data)))
	case "remove":
		err = m.f.Remove(ctx, p)
	case "removeall":
		err = m.f.RemoveAll(ctx, p)
	case "rename":
		err = m.f.Rename(ctx, p, q)
	case "symlink":
		err = m.f.Symlink(ctx, q, p)
	case "link":
		err = m.f.Link(ctx, p, q)
	case "chmod":
		err = m.f.Chmod(ctx, p, 0o600)
	case "chown":
		err = m.f.Chown(ctx, p, 1000, 1000)
	case "setxattr":
		err = m.f.Setxattr(ctx, p, "user.k", data)
	case "mknod":
		mode := rapid.SampledFrom([]fs.FileMode{fs.ModeNamedPipe, fs.ModeSocket, fs.ModeDevice | fs.ModeCharDevice, fs.ModeDevice}).Draw(m.rt, "type")
		err = m.f.Mknod(ctx, p, mode|0o640, uint64(rapid.IntRange(0, 3).Draw(m.rt, "dev"))<<8)
	}
	var pe *fs.PathError
	if err != nil && !errors.As(err, &pe) {
		m.rt.Fatalf("error %v is not a *fs.PathError", err)
	}
}

// path draws a path of one to three names.
func (m *model) path(label string) string {
	n := rapid.IntRange(1, 3).Draw(m.rt, label+"Depth")
	parts := make([]string, n)
	for i := range parts {
		parts[i] = rapid.SampledFrom(names).Draw(m.rt, label)
	}
	return strings.Join(parts, "/")
}

func (m *model) hostPath(p string) string { return filepath.Join(m.host, filepath.FromSlash(p)) }

// step applies one random operation to both and compares the outcomes.
func (m *model) step() {
	ctx := context.Background()
	p := m.path("path")
	data := []byte(strings.Repeat(rapid.SampledFrom([]string{"x", "yz", "\n"}).Draw(m.rt, "byte"), rapid.IntRange(0, 40).Draw(m.rt, "len")))
	var got, want error
	switch op := rapid.SampledFrom([]string{"mkdir", "mkdirall", "write", "append", "truncate", "remove", "removeall", "rename", "symlink", "link", "chmod", "fold", "reopen"}).Draw(m.rt, "op"); op {
	case "mkdir":
		got, want = m.f.Mkdir(ctx, p, 0o755), os.Mkdir(m.hostPath(p), 0o755)
	case "mkdirall":
		got, want = m.f.MkdirAll(ctx, p, 0o755), os.MkdirAll(m.hostPath(p), 0o755)
	case "write":
		got, want = m.f.WriteFile(ctx, p, data, 0o644), os.WriteFile(m.hostPath(p), data, 0o644)
	case "append":
		got, want = appendVFS(m.f, p, data), appendHost(m.hostPath(p), data)
	case "truncate":
		size := int64(rapid.IntRange(0, 60).Draw(m.rt, "size"))
		got, want = m.f.Truncate(ctx, p, size), os.Truncate(m.hostPath(p), size)
	case "remove":
		got, want = m.f.Remove(ctx, p), os.Remove(m.hostPath(p))
	case "removeall":
		got, want = m.f.RemoveAll(ctx, p), os.RemoveAll(m.hostPath(p))
	case "rename":
		q := m.path("to")
		// rename(2) itself: os.Rename refuses any existing directory as
		// the destination, which POSIX allows when it is empty.
		got, want = m.f.Rename(ctx, p, q), syscall.Rename(m.hostPath(p), m.hostPath(q))
	case "symlink":
		// Targets only go down, so no host link can leave the model
		// directory wherever it is moved (vfstest covers "..").
		target := m.path("target")
		got, want = m.f.Symlink(ctx, target, p), os.Symlink(target, m.hostPath(p))
	case "link":
		q := m.path("to")
		got, want = m.f.Link(ctx, p, q), os.Link(m.hostPath(p), m.hostPath(q))
	case "chmod":
		mode := rapid.SampledFrom([]fs.FileMode{0o600, 0o644, 0o755, 0o700}).Draw(m.rt, "mode")
		got, want = m.f.Chmod(ctx, p, mode), os.Chmod(m.hostPath(p), mode)
	case "fold":
		must(m.rt, m.f.Fold(ctx))
		return
	case "reopen":
		must(m.rt, m.f.Close())
		f, err := vfs.Open(ctx, m.e.deps, m.ws, vfs.Options{FoldRows: -1})
		must(m.rt, err)
		m.f = f
		return
	}
	if (got == nil) != (want == nil) {
		m.rt.Fatalf("outcome differs: vfs %v, host %v\nhost tree after:\n%s", got, want, m.hostTree())
	}
	if got == nil {
		return
	}
	var pe *fs.PathError
	if !errors.As(got, &pe) {
		m.rt.Fatalf("vfs error %v is not a *fs.PathError", got)
	}
	if sentinel := hostSentinel(want); sentinel != nil && !errors.Is(got, sentinel) {
		m.rt.Fatalf("vfs error %v, host %v\nhost tree after:\n%s", got, want, m.hostTree())
	}
}

// hostSentinel maps an unambiguous host errno to the vfs sentinel.
func hostSentinel(err error) error {
	var errno syscall.Errno
	if !errors.As(err, &errno) {
		return nil
	}
	switch errno {
	case syscall.ENOENT:
		return fs.ErrNotExist
	case syscall.ENOTDIR:
		return errdefs.ErrNotDir
	case syscall.EISDIR:
		return errdefs.ErrIsDir
	case syscall.ELOOP:
		return errdefs.ErrLoop
	case syscall.ENOTEMPTY:
		return errdefs.ErrNotEmpty
	}
	return nil
}

// hostTree lists the model's entries, for failure messages.
func (m *model) hostTree() string {
	var b strings.Builder
	_ = filepath.WalkDir(m.host, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(m.host, p)
		target, _ := os.Readlink(p)
		fmt.Fprintf(&b, "%s %v %s\n", rel, d.Type(), target)
		return nil
	})
	return b.String()
}

func appendVFS(f *vfs.FS, p string, data []byte) error {
	h, err := f.OpenFile(context.Background(), p, vfs.O_WRONLY|vfs.O_CREATE|vfs.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	if _, err := h.Write(data); err != nil {
		_ = h.Close()
		return err
	}
	return h.Close()
}

func appendHost(p string, data []byte) error {
	h, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	if _, err := h.Write(data); err != nil {
		_ = h.Close()
		return err
	}
	return h.Close()
}

// compare walks both trees and fails on any difference in entries, types,
// file modes, contents, link counts of files or link targets.
func (m *model) compare() {
	must(m.rt, m.f.Check(context.Background()))
	want := map[string]string{}
	err := filepath.WalkDir(m.host, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(m.host, p)
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		want[filepath.ToSlash(rel)] = describe(fi, fi.Sys().(*syscall.Stat_t).Nlink, func() (string, error) {
			b, err := os.ReadFile(p)
			return string(b), err
		}, func() (string, error) { return os.Readlink(p) })
		return nil
	})
	must(m.rt, err)
	ctx := context.Background()
	got := map[string]string{}
	err = fs.WalkDir(lstatFS{m.f}, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := m.f.Lstat(ctx, p)
		if err != nil {
			return err
		}
		got[p] = describe(fi, uint64(fi.Sys().(*vfs.Attr).Nlink), func() (string, error) {
			b, err := m.f.ReadFile(ctx, p)
			return string(b), err
		}, func() (string, error) { return m.f.Readlink(ctx, p) })
		return nil
	})
	must(m.rt, err)
	for p, w := range want {
		if got[p] != w {
			m.rt.Fatalf("%s: vfs %q, host %q", p, got[p], w)
		}
	}
	for p, g := range got {
		if _, ok := want[p]; !ok {
			m.rt.Fatalf("%s: vfs %q, missing on host", p, g)
		}
	}
}

func describe(fi fs.FileInfo, nlink uint64, read, readlink func() (string, error)) string {
	switch {
	case fi.IsDir():
		return fmt.Sprintf("dir %v", fi.Mode().Perm())
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := readlink()
		return fmt.Sprintf("symlink %q %v", target, err)
	default:
		data, err := read()
		return fmt.Sprintf("file %v nlink=%d %q %v", fi.Mode().Perm(), nlink, data, err)
	}
}

// lstatFS walks an FS without following symbolic links (fs.WalkDir uses
// ReadDir entries, whose types come from Lstat).
type lstatFS struct{ f *vfs.FS }

func (l lstatFS) Open(name string) (fs.File, error) { return l.f.IOFS(context.Background()).Open(name) }
func (l lstatFS) ReadDir(name string) ([]fs.DirEntry, error) {
	return l.f.ReadDir(context.Background(), name)
}
