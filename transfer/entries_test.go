package transfer_test

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/forkspace/forkspace/transfer"
	"github.com/forkspace/forkspace/vfs"
)

// tarItem is what a tar entry holds: its header's fields an export sets
// (extended attributes among its PAX records) and its body.
type tarItem struct {
	Name, Linkname      string
	Typeflag            byte
	Mode                int64
	Uid, Gid            int
	Size                int64
	ModTime, AccessTime time.Time
	Xattrs              map[string]string
	Body                []byte
}

func (a tarItem) equal(b tarItem) bool {
	return a.Name == b.Name && a.Linkname == b.Linkname && a.Typeflag == b.Typeflag &&
		a.Mode == b.Mode && a.Uid == b.Uid && a.Gid == b.Gid && a.Size == b.Size &&
		a.ModTime.Equal(b.ModTime) && a.AccessTime.Equal(b.AccessTime) &&
		maps.Equal(a.Xattrs, b.Xattrs) && bytes.Equal(a.Body, b.Body)
}

// entriesTree writes a tree with every kind of entry an export writes:
// extended attributes on files, directories and (through them) symbolic
// links, hard links, dangling and live symbolic links, empty, inline,
// chunked and large files, nested directories, owners and times.
func entriesTree(t *testing.T, f *vfs.FS) {
	t.Helper()
	ctx := context.Background()
	must(t, f.MkdirAll(ctx, "a/b/c", 0o750))
	must(t, f.MkdirAll(ctx, "e", 0o700))
	files := map[string][]byte{
		"a/empty":     nil,
		"a/inline":    []byte("a small inline body"),
		"a/b/chunked": pattern(40<<10, 3),
		"a/b/c/big":   pattern(700<<10, 4),
		"a/b/c/10k":   pattern(10<<10, 5),
		"e/linked":    pattern(5<<10, 6),
		"top":         []byte("top"),
	}
	for name, data := range files {
		must(t, f.WriteFile(ctx, name, data, 0o640))
	}
	must(t, f.Link(ctx, "e/linked", "a/hard"))
	must(t, f.Link(ctx, "a/b/chunked", "e/hard-chunked"))
	must(t, f.Symlink(ctx, "../top", "a/to-top"))
	must(t, f.Symlink(ctx, "nowhere", "a/dangling"))
	must(t, f.Symlink(ctx, "b", "a/to-dir"))
	for i, name := range []string{"a", "a/b/c", "a/inline", "a/b/c/big", "e/linked", "a/to-top", "a/empty"} {
		must(t, f.Setxattr(ctx, name, "user.k", fmt.Appendf(nil, "v%d", i)))
		must(t, f.Setxattr(ctx, name, "trusted.bin", []byte{0, byte(i), 0xff}))
	}
	must(t, f.Setxattr(ctx, "a/b", "user.empty", nil))
	must(t, f.Chown(ctx, "a/inline", 1001, 1002))
	must(t, f.Chmod(ctx, "a/b/c/10k", 0o4755))
	when := time.Unix(1_600_000_000, 123_456_789)
	must(t, f.Chtimes(ctx, "a/b", when, when.Add(time.Second)))
	must(t, f.Chtimes(ctx, "top", when.Add(time.Minute), when))
}

// TestExportTarEntries: the tar an export writes holds, entry by entry,
// what the workspace read through the plain API holds — headers (names,
// types, modes, owners, times, sizes, link targets, extended attributes
// as PAX records) and bodies — for a directory and for a single file.
func TestExportTarEntries(t *testing.T) {
	ctx := context.Background()
	_, ws := newWorkspace(t)
	entriesTree(t, ws.FS)
	for _, root := range []string{".", "a", "a/b/c/big"} {
		var buf bytes.Buffer
		if err := transfer.ExportTar(ctx, ws.FS, root, &buf, transfer.Options{}); err != nil {
			t.Fatalf("export %s: %v", root, err)
		}
		got, want := readTarItems(t, &buf), wsTarItems(t, ws.FS, root)
		if len(got) != len(want) {
			t.Errorf("export %s: %d entries, want %d", root, len(got), len(want))
		}
		for i := range min(len(got), len(want)) {
			if !got[i].equal(want[i]) {
				t.Errorf("export %s: entry %d:\n got %+v\nwant %+v", root, i, got[i], want[i])
			}
		}
	}
}

// readTarItems reads every entry of a tar stream.
func readTarItems(t *testing.T, r io.Reader) []tarItem {
	t.Helper()
	var out []tarItem
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return out
		}
		if err != nil {
			t.Fatalf("read tar: %v", err)
		}
		body, err := io.ReadAll(tr)
		if err != nil {
			t.Fatalf("read tar %s: %v", h.Name, err)
		}
		it := tarItem{
			Name: h.Name, Linkname: h.Linkname, Typeflag: h.Typeflag, Mode: h.Mode, Uid: h.Uid, Gid: h.Gid,
			Size: h.Size, ModTime: h.ModTime, AccessTime: h.AccessTime, Body: body,
		}
		for k, v := range h.PAXRecords {
			if name, ok := strings.CutPrefix(k, "SCHILY.xattr."); ok {
				if it.Xattrs == nil {
					it.Xattrs = map[string]string{}
				}
				it.Xattrs[name] = v
			}
		}
		out = append(out, it)
	}
}

// wsTarItems is what an export of root should write, read from f one
// path at a time through Lstat, Readlink, ReadFile, Listxattr and
// Getxattr: entries in name order, a directory before its contents, the
// second name of a file a hard link, no extended attributes on links.
func wsTarItems(t *testing.T, f *vfs.FS, root string) []tarItem {
	t.Helper()
	ctx := context.Background()
	var out []tarItem
	seen := map[uint64]string{}
	visit := func(p, name string, fi fs.FileInfo) {
		var err error
		a := fi.Sys().(*vfs.Attr)
		it := tarItem{
			Name: name, Typeflag: tar.TypeReg, Mode: int64(vfs.UnixMode(fi.Mode())), Uid: int(a.Uid), Gid: int(a.Gid),
			ModTime: fi.ModTime(), AccessTime: a.Atime,
		}
		switch {
		case fi.IsDir():
			it.Typeflag, it.Name = tar.TypeDir, name+"/"
		case fi.Mode()&fs.ModeSymlink != 0:
			it.Typeflag = tar.TypeSymlink
			if it.Linkname, err = f.Readlink(ctx, p); err != nil {
				t.Fatal(err)
			}
		case a.Nlink > 1 && seen[a.Ino] != "":
			it.Typeflag, it.Linkname = tar.TypeLink, seen[a.Ino]
		default:
			seen[a.Ino] = name
			if it.Body, err = f.ReadFile(ctx, p); err != nil {
				t.Fatal(err)
			}
			it.Size = int64(len(it.Body))
		}
		if it.Typeflag == tar.TypeReg || it.Typeflag == tar.TypeDir {
			it.Xattrs = wsXattrs(t, f, p)
		}
		if name != "." {
			out = append(out, it)
		}
	}
	fi, err := f.Stat(ctx, root)
	if err != nil {
		t.Fatal(err)
	}
	if fi.IsDir() {
		walkWS(t, f, root, ".", visit)
	} else {
		walkWS(t, f, root, fi.Name(), visit)
	}
	return out
}

// wsXattrs reads the extended attributes of p through Listxattr and
// Getxattr (nil when none).
func wsXattrs(t *testing.T, f *vfs.FS, p string) map[string]string {
	t.Helper()
	ctx := context.Background()
	names, err := f.Listxattr(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	var out map[string]string
	for _, n := range names {
		v, err := f.Getxattr(ctx, p, n)
		if err != nil {
			t.Fatal(err)
		}
		if out == nil {
			out = map[string]string{}
		}
		out[n] = string(v)
	}
	return out
}
