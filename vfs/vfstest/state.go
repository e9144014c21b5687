package vfstest

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"

	"github.com/forkspace/forkspace/vfs"
)

// Fataler is what State needs of a *testing.T or a *rapid.T.
type Fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

// State renders every entry of f, the root (".") included, keyed by path, by what
// vfs.Diff compares and vfs.ApplyDiff reproduces: type and permissions,
// owner, a file's contents and modification time, a symbolic link's
// target, extended attributes, and for a file the sorted paths of all its
// hard links. Two trees with equal States are the same tree up to inode
// numbers and the times Diff ignores (directories', symbolic links',
// ctime, atime). It fails t on any error.
func State(t Fataler, f *vfs.FS) map[string]string {
	t.Helper()
	ctx := context.Background()
	out := map[string]string{}
	links := map[uint64][]string{}
	var visit func(p string)
	visit = func(p string) {
		fi, err := f.Lstat(ctx, p)
		if err != nil {
			t.Fatalf("state: %v", err)
		}
		a := fi.Sys().(*vfs.Attr)
		s := fmt.Sprintf("%v %d:%d", fi.Mode(), a.Uid, a.Gid)
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := f.Readlink(ctx, p)
			if err != nil {
				t.Fatalf("state: %v", err)
			}
			out[p] = s + " -> " + target
			return
		case fi.Mode().IsRegular():
			data, err := f.ReadFile(ctx, p)
			if err != nil {
				t.Fatalf("state: %v", err)
			}
			s += fmt.Sprintf(" %q mtime=%d", data, a.Mtime.UnixNano())
			links[a.Ino] = append(links[a.Ino], p)
		case !fi.IsDir(): // a FIFO, socket or device
			s += fmt.Sprintf(" rdev=%d", a.Rdev)
			links[a.Ino] = append(links[a.Ino], p)
		}
		out[p] = s + xattrs(t, f, p)
		if !fi.IsDir() {
			return
		}
		ents, err := f.ReadDir(ctx, p)
		if err != nil {
			t.Fatalf("state: %v", err)
		}
		for _, e := range ents {
			if p == "." {
				visit(e.Name())
			} else {
				visit(p + "/" + e.Name())
			}
		}
	}
	visit(".")
	for _, ps := range links {
		slices.Sort(ps)
		for _, p := range ps {
			out[p] += " links=" + strings.Join(ps, ",")
		}
	}
	return out
}

// xattrs renders the extended attributes of file or directory p as
// " x[name]=value", in Listxattr's order.
func xattrs(t Fataler, f *vfs.FS, p string) string {
	t.Helper()
	ctx := context.Background()
	names, err := f.Listxattr(ctx, p)
	if err != nil {
		t.Fatalf("xattrs: %v", err)
	}
	var s string
	for _, n := range names {
		v, err := f.Getxattr(ctx, p, n)
		if err != nil {
			t.Fatalf("xattrs: %v", err)
		}
		s += fmt.Sprintf(" x[%s]=%q", n, v)
	}
	return s
}

// StateDiff describes the first difference between two State results
// ("" when they are equal).
func StateDiff(got, want map[string]string) string {
	for _, p := range slices.Sorted(maps.Keys(want)) {
		if got[p] != want[p] {
			return fmt.Sprintf("%s: %q, want %q", p, got[p], want[p])
		}
	}
	for _, p := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[p]; !ok {
			return fmt.Sprintf("%s: %q, want nothing", p, got[p])
		}
	}
	return ""
}
