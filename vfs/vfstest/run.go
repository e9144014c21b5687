package vfstest

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/forkspace/forkspace/vfs"
)

// Run runs the conformance suite. newFS must return a fresh, empty, live
// (writable) FS for each call; it owns closing it (t.Cleanup).
func Run(t *testing.T, newFS func(t *testing.T) *vfs.FS) {
	tests := []struct {
		name string
		fn   func(t *testing.T, f *vfs.FS)
	}{
		{"BadPaths", testBadPaths},
		{"WriteRead", testWriteRead},
		{"Mkdir", testMkdir},
		{"ReadDir", testReadDir},
		{"Remove", testRemove},
		{"RemoveAll", testRemoveAll},
		{"Rename", testRename},
		{"RenameDirs", testRenameDirs},
		{"Symlinks", testSymlinks},
		{"SymlinkEscapes", testSymlinkEscapes},
		{"HardLinks", testHardLinks},
		{"Attributes", testAttributes},
		{"Xattrs", testXattrs},
		{"Truncate", testTruncate},
		{"Handles", testHandles},
		{"HandleFlags", testHandleFlags},
		{"SparseFiles", testSparseFiles},
		{"OpenUnlinked", testOpenUnlinked},
		{"Usage", testUsage},
		{"IOFS", testIOFS},
		{"Concurrent", testConcurrent},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { tt.fn(t, newFS(t)) })
	}
}

// Dump renders every entry of f (type, permissions, size, link count,
// owner, mtime, contents or target, xattrs) keyed by path, for equality
// checks. It first runs f.Check, and fails t on any error.
func Dump(t testing.TB, f *vfs.FS) map[string]string {
	t.Helper()
	ctx := context.Background()
	if err := f.Check(ctx); err != nil {
		t.Fatalf("check: %v", err)
	}
	out := map[string]string{}
	var walk func(p string)
	walk = func(p string) {
		fi, err := f.Lstat(ctx, p)
		if err != nil {
			t.Fatalf("dump: %v", err)
		}
		a := fi.Sys().(*vfs.Attr)
		s := fmt.Sprintf("%v size=%d nlink=%d owner=%d:%d mtime=%d", fi.Mode(), fi.Size(), a.Nlink, a.Uid, a.Gid, fi.ModTime().UnixNano())
		switch {
		case fi.Mode().IsRegular():
			data, err := f.ReadFile(ctx, p)
			if err != nil {
				t.Fatalf("dump: %v", err)
			}
			s += fmt.Sprintf(" data=%q", data)
		case fi.Mode()&fs.ModeSymlink != 0:
			target, err := f.Readlink(ctx, p)
			if err != nil {
				t.Fatalf("dump: %v", err)
			}
			s += " -> " + target
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			s += xattrs(t, f, p)
		}
		out[p] = s
		if fi.IsDir() {
			ents, err := f.ReadDir(ctx, p)
			if err != nil {
				t.Fatalf("dump: %v", err)
			}
			for _, e := range ents {
				walk(join(p, e.Name()))
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

// Equal fails t with the differing entries unless want and got are equal.
func Equal(t testing.TB, want, got map[string]string) {
	t.Helper()
	if maps.Equal(want, got) {
		return
	}
	keys := slices.Sorted(maps.Keys(want))
	for k := range got {
		if _, ok := want[k]; !ok {
			keys = append(keys, k)
		}
	}
	var b strings.Builder
	for _, k := range keys {
		if want[k] != got[k] {
			fmt.Fprintf(&b, "\n%s:\n  want %s\n  got  %s", k, want[k], got[k])
		}
	}
	t.Fatalf("trees differ:%s", b.String())
}

// IsPathErr fails t unless err is a *fs.PathError that wraps target.
func IsPathErr(t testing.TB, err, target error) {
	t.Helper()
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		t.Fatalf("error %v (%T) is not a *fs.PathError", err, err)
	}
	if !errors.Is(err, target) {
		t.Fatalf("error %v does not wrap %v", err, target)
	}
}

// Fails runs op, which must fail with a *fs.PathError wrapping target and
// leave the tree of f unchanged.
func Fails(t testing.TB, f *vfs.FS, target error, op func() error) {
	t.Helper()
	before := Dump(t, f)
	IsPathErr(t, op(), target)
	Equal(t, before, Dump(t, f))
}

// ok fails t on a non-nil error.
func ok(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// write creates or replaces file name with data.
func write(t testing.TB, f *vfs.FS, name, data string) {
	t.Helper()
	ok(t, f.WriteFile(context.Background(), name, []byte(data), 0o644))
}

// read returns the contents of name.
func read(t testing.TB, f *vfs.FS, name string) string {
	t.Helper()
	data, err := f.ReadFile(context.Background(), name)
	ok(t, err)
	return string(data)
}

// attr returns the attributes of name (following links).
func attr(t testing.TB, f *vfs.FS, name string) *vfs.Attr {
	t.Helper()
	fi, err := f.Stat(context.Background(), name)
	ok(t, err)
	return fi.Sys().(*vfs.Attr)
}
