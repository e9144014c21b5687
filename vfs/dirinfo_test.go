package vfs_test

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"maps"
	"testing"

	"github.com/forkspace/forkspace/vfs"
)

// TestReadDirInfo: each entry of a listing carries what Lstat, Readlink
// and Listxattr with Getxattr (and Xattrs) read of its path, with extended
// attributes only when asked for, and a link's own (none), not its
// target's.
func TestReadDirInfo(t *testing.T) {
	e := newEnv(t, vfs.Options{})
	f := e.open(e.ws)
	ctx := context.Background()
	must(t, f.MkdirAll(ctx, "d/sub", 0o750))
	must(t, f.WriteFile(ctx, "d/file", []byte("body"), 0o640))
	must(t, f.WriteFile(ctx, "d/plain", nil, 0o600))
	must(t, f.Link(ctx, "d/file", "d/hard"))
	must(t, f.Symlink(ctx, "file", "d/link"))
	must(t, f.Setxattr(ctx, "d/file", "user.a", []byte("1")))
	must(t, f.Setxattr(ctx, "d/file", "user.b", nil))
	must(t, f.Setxattr(ctx, "d/sub", "user.dir", []byte{0, 1}))
	for _, xattrs := range []bool{false, true} {
		dis, err := f.ReadDirInfo(ctx, "d", xattrs)
		must(t, err)
		des, err := f.ReadDir(ctx, "d")
		must(t, err)
		if len(dis) != len(des) {
			t.Fatalf("ReadDirInfo: %d entries, ReadDir %d", len(dis), len(des))
		}
		for i, di := range dis {
			p := "d/" + des[i].Name()
			fi, err := f.Lstat(ctx, p)
			must(t, err)
			if di.Name != des[i].Name() || fmt.Sprint(di.Info.Sys()) != fmt.Sprint(fi.Sys()) || di.Info.Name() != fi.Name() {
				t.Errorf("%s: ReadDirInfo %s %+v, Lstat %+v", p, di.Name, di.Info.Sys(), fi.Sys())
			}
			var target string
			if fi.Mode()&fs.ModeSymlink != 0 {
				target, err = f.Readlink(ctx, p)
				must(t, err)
			}
			if di.Target != target {
				t.Errorf("%s: target %q, want %q", p, di.Target, target)
			}
			var want map[string][]byte
			if xattrs && fi.Mode()&fs.ModeSymlink == 0 {
				want = listXattrs(t, f, p)
			}
			if !maps.EqualFunc(di.Xattrs, want, bytes.Equal) || (di.Xattrs == nil) != (want == nil) {
				t.Errorf("%s: xattrs %q, want %q", p, di.Xattrs, want)
			}
		}
	}
}

// listXattrs reads the extended attributes of p through Listxattr and
// Getxattr, checks that Xattrs reads the same and returns them (nil when
// none).
func listXattrs(t *testing.T, f *vfs.FS, p string) map[string][]byte {
	t.Helper()
	ctx := context.Background()
	names, err := f.Listxattr(ctx, p)
	must(t, err)
	var out map[string][]byte
	for _, n := range names {
		v, err := f.Getxattr(ctx, p, n)
		must(t, err)
		if out == nil {
			out = map[string][]byte{}
		}
		out[n] = v
	}
	got, err := f.Xattrs(ctx, p)
	must(t, err)
	if !maps.EqualFunc(got, out, bytes.Equal) || (got == nil) != (out == nil) {
		t.Errorf("Xattrs(%s) = %q, want %q", p, got, out)
	}
	return out
}
