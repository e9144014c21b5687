package transfer_test

import (
	"archive/tar"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/vfs"
)

// node is what a round trip must preserve about one entry.
type node struct {
	Type   string // "dir", "file", "symlink"
	Mode   fs.FileMode
	Mtime  int64 // ns; 0 for symlinks (a workspace cannot set a link's times)
	Target string
	Sum    string // contents hash of regular files
	Links  string // names sharing the inode, when more than one
	UID    int
	GID    int
}

type tree map[string]node

// linkGroups fills Links from groups of names sharing an inode.
func linkGroups(t tree, groups map[string][]string) {
	for _, names := range groups {
		if len(names) < 2 {
			continue
		}
		slices.Sort(names)
		for _, n := range names {
			nd := t[n]
			nd.Links = strings.Join(names, ",")
			t[n] = nd
		}
	}
}

func sum(r io.Reader) (string, error) {
	h := sha256.New()
	if _, err := io.Copy(h, r); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

func typeOf(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "dir"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	}
	return "file"
}

func bits(m fs.FileMode) fs.FileMode {
	return m & (fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky)
}

// hostTree reads a host directory (the root as ".").
func hostTree(t *testing.T, dir string) tree {
	t.Helper()
	out := tree{}
	groups := map[[2]uint64][]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		st := fi.Sys().(*syscall.Stat_t)
		n := node{Type: typeOf(fi.Mode()), Mode: bits(fi.Mode()), Mtime: fi.ModTime().UnixNano(), UID: int(st.Uid), GID: int(st.Gid)}
		switch n.Type {
		case "symlink":
			n.Mtime = 0
			if n.Target, err = os.Readlink(p); err != nil {
				return err
			}
		case "file":
			f, err := os.Open(p)
			if err != nil {
				return err
			}
			n.Sum, err = sum(f)
			f.Close()
			if err != nil {
				return err
			}
		}
		if n.Type != "dir" {
			k := [2]uint64{uint64(st.Dev), st.Ino}
			groups[k] = append(groups[k], rel)
		}
		out[rel] = n
		return nil
	})
	if err != nil {
		t.Fatalf("read host tree: %v", err)
	}
	g := map[string][]string{}
	for k, v := range groups {
		g[fmt.Sprint(k)] = v
	}
	linkGroups(out, g)
	return out
}

// wsTree reads a workspace directory (the root as ".").
func wsTree(t *testing.T, f *vfs.FS, root string) tree {
	t.Helper()
	ctx := context.Background()
	out := tree{}
	groups := map[string][]string{}
	walkWS(t, f, root, ".", func(p, rel string, fi fs.FileInfo) {
		var err error
		a := fi.Sys().(*vfs.Attr)
		n := node{Type: typeOf(fi.Mode()), Mode: bits(fi.Mode()), Mtime: fi.ModTime().UnixNano(), UID: int(a.Uid), GID: int(a.Gid)}
		switch n.Type {
		case "symlink":
			n.Mtime, n.UID, n.GID = 0, 0, 0
			if n.Target, err = f.Readlink(ctx, p); err != nil {
				t.Fatal(err)
			}
		case "file":
			h, err := f.Open(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			n.Sum, err = sum(h)
			h.Close()
			if err != nil {
				t.Fatal(err)
			}
		}
		if n.Type != "dir" {
			k := fmt.Sprint(a.Ino)
			groups[k] = append(groups[k], rel)
		}
		out[rel] = n
	})
	linkGroups(out, groups)
	return out
}

// walkWS calls fn for p, named rel, and everything beneath it in f,
// parents first (rel "." stays the root's own name: its children are
// named from there).
func walkWS(t *testing.T, f *vfs.FS, p, rel string, fn func(p, rel string, fi fs.FileInfo)) {
	t.Helper()
	ctx := context.Background()
	fi, err := f.Lstat(ctx, p)
	if err != nil {
		t.Fatalf("lstat %s: %v", p, err)
	}
	fn(p, rel, fi)
	if !fi.IsDir() {
		return
	}
	des, err := f.ReadDir(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	for _, de := range des {
		cp, cr := de.Name(), de.Name()
		if p != "." {
			cp = p + "/" + cp
		}
		if rel != "." {
			cr = rel + "/" + cr
		}
		walkWS(t, f, cp, cr, fn)
	}
}

// failer is what tree helpers need of *testing.T and *rapid.T.
type failer interface {
	Helper()
	Errorf(format string, args ...any)
	Fatalf(format string, args ...any)
}

// tarTree reads a tar stream (no root entry).
func tarTree(t failer, r io.Reader) tree {
	t.Helper()
	out := tree{}
	groups := map[string][]string{}
	tr := tar.NewReader(r)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("read tar: %v", err)
		}
		name := strings.TrimSuffix(h.Name, "/")
		n := node{Type: typeOf(h.FileInfo().Mode()), Mode: bits(h.FileInfo().Mode()), Mtime: h.ModTime.UnixNano(), Target: h.Linkname, UID: h.Uid, GID: h.Gid}
		switch h.Typeflag {
		case tar.TypeSymlink:
			n.Mtime, n.UID, n.GID = 0, 0, 0
		case tar.TypeLink:
			first := out[h.Linkname]
			n = first
			groups[h.Linkname] = append(groups[h.Linkname], name)
		case tar.TypeReg:
			if n.Sum, err = sum(tr); err != nil {
				t.Fatalf("read tar: %v", err)
			}
			groups[name] = append(groups[name], name)
		}
		out[name] = n
	}
	linkGroups(out, groups)
	return out
}

// diffTrees reports the first differences between want and got.
func diffTrees(t failer, want, got tree) {
	t.Helper()
	for _, k := range slices.Sorted(maps.Keys(want)) {
		g, ok := got[k]
		if !ok {
			t.Errorf("%s: missing", k)
			continue
		}
		if g != want[k] {
			t.Errorf("%s:\n got %+v\nwant %+v", k, g, want[k])
		}
	}
	for k := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("%s: unexpected", k)
		}
	}
}

func openStore(t *testing.T) *forkspace.Store {
	t.Helper()
	return openStoreWith(t, forkspace.Options{})
}

// openStoreWith opens a store in a new directory with opts.
func openStoreWith(t *testing.T, opts forkspace.Options) *forkspace.Store {
	t.Helper()
	opts.Dir, opts.Logger = t.TempDir(), discard
	st, err := forkspace.Open(context.Background(), opts)
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func newWorkspace(t *testing.T) (*forkspace.Store, *forkspace.Workspace) {
	t.Helper()
	st := openStore(t)
	ws, err := st.Create(context.Background(), "w", forkspace.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return st, ws
}

// discard silences store logs in tests.
var discard = slog.New(slog.DiscardHandler)

// pattern returns n deterministic, poorly compressible bytes.
func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	x := uint32(seed) + 1
	for i := range b {
		x ^= x << 13
		x ^= x >> 17
		x ^= x << 5
		b[i] = byte(x)
	}
	return b
}

var base = time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)

// makeHostTree writes a tree with every preserved feature into dir.
func makeHostTree(t *testing.T, dir string) {
	t.Helper()
	for _, d := range []string{"src/pkg", "empty", "deep/a/b/c"} {
		must(t, os.MkdirAll(filepath.Join(dir, d), 0o755))
	}
	files := map[string]fs.FileMode{
		"README.md":         0o644,
		"src/main.go":       0o600,
		"src/pkg/run.sh":    0o755,
		"deep/a/b/c/leaf":   0o640,
		"src/pkg/setgid":    0o2755,
		"big.bin":           0o644,
		"empty-file":        0o444,
		"src/pkg/hard1.txt": 0o644,
	}
	i := 0
	for _, name := range slices.Sorted(maps.Keys(files)) {
		data := pattern(100+i*37, byte(i))
		if name == "big.bin" {
			data = pattern(3<<20, 9) // several chunks
		}
		if name == "empty-file" {
			data = nil
		}
		p := filepath.Join(dir, name)
		must(t, os.WriteFile(p, data, 0o600))
		must(t, os.Chmod(p, files[name]))
		i++
	}
	must(t, os.Link(filepath.Join(dir, "src/pkg/hard1.txt"), filepath.Join(dir, "hard2.txt")))
	must(t, os.Link(filepath.Join(dir, "src/pkg/hard1.txt"), filepath.Join(dir, "deep/hard3.txt")))
	must(t, os.Symlink("../README.md", filepath.Join(dir, "src/readme-link")))
	must(t, os.Symlink("/etc/passwd", filepath.Join(dir, "abs-link")))
	must(t, os.Symlink("does/not/exist", filepath.Join(dir, "dangling")))
	must(t, os.Symlink("src/pkg", filepath.Join(dir, "dir-link")))
	must(t, os.Chmod(filepath.Join(dir, "deep/a"), 0o750))
	// Distinct nanosecond mtimes, directories last (creating entries
	// changes them).
	var paths []string
	must(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		paths = append(paths, p)
		return err
	}))
	for i, p := range slices.Backward(paths) {
		mt := base.Add(time.Duration(i)*time.Hour + time.Duration(i*1234567+89))
		ts := unix.NsecToTimespec(mt.UnixNano())
		must(t, unix.UtimesNanoAt(unix.AT_FDCWD, p, []unix.Timespec{ts, ts}, unix.AT_SYMLINK_NOFOLLOW))
	}
}

// fsView is a read-only workspace view.
type fsView = *vfs.FS
