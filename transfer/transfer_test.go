package transfer_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/forkspace/forkspace/transfer"
	"github.com/forkspace/forkspace/vfs"
)

// withoutSymlinkTimes drops what a workspace cannot keep for links.
func withoutSymlinkOwners(tr tree) tree {
	out := tree{}
	for k, n := range tr {
		if n.Type == "symlink" {
			n.UID, n.GID = 0, 0
		}
		out[k] = n
	}
	return out
}

func TestDirRoundTrip(t *testing.T) {
	ctx := context.Background()
	_, ws := newWorkspace(t)
	src := t.TempDir()
	makeHostTree(t, src)
	want := withoutSymlinkOwners(hostTree(t, src))

	var last transfer.Progress
	opts := transfer.Options{Progress: func(p transfer.Progress) { last = p }, Totals: true}
	if err := transfer.ImportDir(ctx, ws.FS, "/in/tree", src, opts); err != nil {
		t.Fatalf("import: %v", err)
	}
	if last.Files != last.TotalFiles || last.Bytes != last.TotalBytes || last.TotalFiles != int64(len(want)) {
		t.Errorf("final progress %+v, want totals reached with %d entries", last, len(want))
	}
	diffTrees(t, want, wsTree(t, ws.FS, "in/tree"))

	out := filepath.Join(t.TempDir(), "out")
	if err := transfer.ExportDir(ctx, ws.FS, "in/tree", out, transfer.Options{}); err != nil {
		t.Fatalf("export: %v", err)
	}
	diffTrees(t, want, withoutSymlinkOwners(hostTree(t, out)))
}

func TestTarRoundTrip(t *testing.T) {
	ctx := context.Background()
	_, ws := newWorkspace(t)
	src := t.TempDir()
	makeHostTree(t, src)

	// Host → workspace → tar gives the archive under test; tar →
	// workspace → tar must reproduce it exactly.
	if err := transfer.ImportDir(ctx, ws.FS, "a", src, transfer.Options{}); err != nil {
		t.Fatal(err)
	}
	for _, gz := range []bool{false, true} {
		var first bytes.Buffer
		if err := transfer.ExportTar(ctx, ws.FS, "a", &first, transfer.Options{Gzip: gz}); err != nil {
			t.Fatalf("export tar: %v", err)
		}
		archive := first.Bytes()
		if err := transfer.ImportTar(ctx, ws.FS, "b", bytes.NewReader(archive), transfer.Options{}); err != nil {
			t.Fatalf("import tar (gzip %v): %v", gz, err)
		}
		var second bytes.Buffer
		if err := transfer.ExportTar(ctx, ws.FS, "b", &second, transfer.Options{}); err != nil {
			t.Fatal(err)
		}
		want := tarTree(t, plain(t, archive))
		if len(want) != len(hostTree(t, src))-1 {
			t.Errorf("archive has %d entries, source %d", len(want), len(hostTree(t, src))-1)
		}
		diffTrees(t, want, tarTree(t, &second))
		if err := ws.RemoveAll(ctx, "b"); err != nil {
			t.Fatal(err)
		}
	}
}

// plain returns a reader of the archive, decompressed if needed.
func plain(t *testing.T, archive []byte) io.Reader {
	t.Helper()
	if len(archive) > 1 && archive[0] == 0x1f && archive[1] == 0x8b {
		zr, err := gzip.NewReader(bytes.NewReader(archive))
		if err != nil {
			t.Fatal(err)
		}
		return zr
	}
	return bytes.NewReader(archive)
}

// tarOf builds an archive from headers; regular files get body as data.
func tarOf(t *testing.T, hs ...*tar.Header) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for _, h := range hs {
		body := []byte(h.Linkname)
		if h.Typeflag == tar.TypeReg {
			h.Size = int64(len(body))
		}
		if h.Typeflag == tar.TypeReg {
			h.Linkname = ""
		}
		if h.Mode == 0 && h.Typeflag != tar.TypeXGlobalHeader {
			h.Mode = 0o644
		}
		if err := tw.WriteHeader(h); err != nil {
			t.Fatal(err)
		}
		if h.Typeflag == tar.TypeReg {
			if _, err := tw.Write(body); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestTarPreservesHeaders(t *testing.T) {
	ctx := context.Background()
	_, ws := newWorkspace(t)
	mt := time.Date(2020, 1, 2, 3, 4, 5, 987654321, time.UTC)
	archive := tarOf(t,
		&tar.Header{Typeflag: tar.TypeDir, Name: "./", Mode: 0o700, ModTime: mt, Format: tar.FormatPAX},
		&tar.Header{Typeflag: tar.TypeReg, Name: "./x/y/file", Linkname: "data", Mode: 0o4755, Uid: 1000, Gid: 2000, ModTime: mt, Format: tar.FormatPAX},
		&tar.Header{Typeflag: tar.TypeLink, Name: "x/hard", Linkname: "./x/y/file"},
		&tar.Header{Typeflag: tar.TypeSymlink, Name: "x/sym", Linkname: "/abs/target"},
		&tar.Header{Typeflag: tar.TypeXGlobalHeader, Name: "global", PAXRecords: map[string]string{"comment": "hi"}},
	)
	if err := transfer.ImportTar(ctx, ws.FS, ".", bytes.NewReader(archive), transfer.Options{}); err != nil {
		t.Fatal(err)
	}
	fi, err := ws.Stat(ctx, "x/y/file")
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode() != 0o755|fs.ModeSetuid || !fi.ModTime().Equal(mt) {
		t.Errorf("file: mode %v mtime %v", fi.Mode(), fi.ModTime())
	}
	if a := fi.Sys().(*vfs.Attr); a.Uid != 1000 || a.Gid != 2000 {
		t.Errorf("file owner %d:%d, want 1000:2000", a.Uid, a.Gid)
	}
	if got, _ := ws.ReadFile(ctx, "x/hard"); string(got) != "data" {
		t.Errorf("hard link reads %q", got)
	}
	if target, _ := ws.Readlink(ctx, "x/sym"); target != "/abs/target" {
		t.Errorf("symlink target %q", target)
	}
	root, err := ws.Stat(ctx, ".")
	if err != nil {
		t.Fatal(err)
	}
	if root.Mode().Perm() != 0o700 || !root.ModTime().Equal(mt) {
		t.Errorf("root: mode %v mtime %v, want the ./ entry's", root.Mode(), root.ModTime())
	}
	// Parents without entries were created as plain directories.
	if fi, err := ws.Lstat(ctx, "x/y"); err != nil || !fi.IsDir() {
		t.Errorf("implicit parent: %v %v", fi, err)
	}
}

func TestTarEscapes(t *testing.T) {
	ctx := context.Background()
	reg := func(name string) *tar.Header {
		return &tar.Header{Typeflag: tar.TypeReg, Name: name, Linkname: "pwned"}
	}
	sym := func(name, target string) *tar.Header {
		return &tar.Header{Typeflag: tar.TypeSymlink, Name: name, Linkname: target}
	}
	hard := func(name, target string) *tar.Header {
		return &tar.Header{Typeflag: tar.TypeLink, Name: name, Linkname: target}
	}
	tests := []struct {
		name    string
		entries []*tar.Header
	}{
		{"dotdot", []*tar.Header{reg("../x")}},
		{"inner dotdot", []*tar.Header{reg("a/../../x")}},
		{"absolute", []*tar.Header{reg("/etc/x")}},
		{"write through absolute symlink", []*tar.Header{sym("evil", "/"), reg("evil/x")}},
		{"write through relative symlink", []*tar.Header{sym("evil", "../.."), reg("evil/x")}},
		{"dir entry through symlink", []*tar.Header{sym("evil", ".."), {Typeflag: tar.TypeDir, Name: "evil/sub/"}}},
		{"hard link outside", []*tar.Header{hard("h", "../outside")}},
		{"hard link absolute", []*tar.Header{hard("h", "/outside")}},
		{"hard link to unknown", []*tar.Header{hard("h", "outside")}},
		{"hard link through symlink", []*tar.Header{sym("evil", ".."), hard("h", "evil/outside")}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, ws := newWorkspace(t)
			if err := ws.WriteFile(ctx, "outside", []byte("keep"), 0o644); err != nil {
				t.Fatal(err)
			}
			before := wsTree(t, ws.FS, ".")
			err := transfer.ImportTar(ctx, ws.FS, "target", bytes.NewReader(tarOf(t, tc.entries...)), transfer.Options{})
			if !errors.Is(err, fs.ErrInvalid) {
				t.Fatalf("import: %v, want fs.ErrInvalid", err)
			}
			// A refused import changes nothing: no target directory, no
			// link to a host path (issue 16).
			diffTrees(t, before, wsTree(t, ws.FS, "."))
		})
	}
}

func TestTarDamaged(t *testing.T) {
	_, ws := newWorkspace(t)
	for _, in := range [][]byte{[]byte("not a tar archive at all, not at all........"), {0x1f, 0x8b, 0, 1, 2}} {
		err := transfer.ImportTar(context.Background(), ws.FS, ".", bytes.NewReader(in), transfer.Options{})
		if !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("import %q: %v, want fs.ErrInvalid", in[:4], err)
		}
	}
}

func TestExportDoesNotFollowDestinationLinks(t *testing.T) {
	ctx := context.Background()
	_, ws := newWorkspace(t)
	for name, data := range map[string]string{"dir/file": "new", "file.txt": "new"} {
		if err := ws.MkdirAll(ctx, filepath.Dir(name), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := ws.WriteFile(ctx, name, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	outside := t.TempDir()
	victim := filepath.Join(outside, "victim")
	if err := os.WriteFile(victim, []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}

	// A planted link where a file goes is replaced, not written through.
	dst := t.TempDir()
	if err := os.Symlink(victim, filepath.Join(dst, "file.txt")); err != nil {
		t.Fatal(err)
	}
	if err := transfer.ExportDir(ctx, ws.FS, "file.txt", dst, transfer.Options{}); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Lstat(filepath.Join(dst, "file.txt")); err != nil || !fi.Mode().IsRegular() {
		t.Errorf("file.txt: %v %v, want a regular file", fi, err)
	}

	// A planted link where a directory goes is refused.
	dst = t.TempDir()
	if err := os.Symlink(outside, filepath.Join(dst, "dir")); err != nil {
		t.Fatal(err)
	}
	err := transfer.ExportDir(ctx, ws.FS, ".", dst, transfer.Options{})
	if !errors.Is(err, fs.ErrExist) && !errors.Is(err, fs.ErrInvalid) {
		t.Fatalf("export through a planted directory link: %v", err)
	}
	if b, _ := os.ReadFile(victim); string(b) != "keep" {
		t.Errorf("victim now %q", b)
	}
	if _, err := os.Lstat(filepath.Join(outside, "file")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("wrote through the link: %v", err)
	}
}

func TestLargeFileStreams(t *testing.T) {
	ctx := context.Background()
	_, ws := newWorkspace(t)
	const size = 20 << 20
	data := pattern(size, 42)
	want, _ := sum(bytes.NewReader(data))

	// Stream a tar through a pipe into the workspace...
	pr, pw := io.Pipe()
	go func() {
		tw := tar.NewWriter(pw)
		err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeReg, Name: "big", Size: size, Mode: 0o644})
		if err == nil {
			_, err = io.Copy(tw, bytes.NewReader(data))
		}
		if err == nil {
			err = tw.Close()
		}
		pw.CloseWithError(err)
	}()
	if err := transfer.ImportTar(ctx, ws.FS, ".", pr, transfer.Options{}); err != nil {
		t.Fatal(err)
	}
	// ...and out of it through another.
	pr2, pw2 := io.Pipe()
	go func() { pw2.CloseWithError(transfer.ExportTar(ctx, ws.FS, ".", pw2, transfer.Options{})) }()
	got := tarTree(t, pr2)
	if got["big"].Sum != want {
		t.Errorf("20 MiB file changed in the round trip")
	}
	// And to a host directory.
	out := t.TempDir()
	if err := transfer.ExportDir(ctx, ws.FS, "big", out, transfer.Options{}); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(filepath.Join(out, "big"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if s, _ := sum(f); s != want {
		t.Errorf("exported 20 MiB file differs")
	}
}

func TestExportCheckpointView(t *testing.T) {
	ctx := context.Background()
	st, ws := newWorkspace(t)
	src := t.TempDir()
	makeHostTree(t, src)
	if err := transfer.ImportDir(ctx, ws.FS, ".", src, transfer.Options{}); err != nil {
		t.Fatal(err)
	}
	want := wsTree(t, ws.FS, ".")
	if _, err := ws.Checkpoint(ctx, "v1"); err != nil {
		t.Fatal(err)
	}
	if err := ws.RemoveAll(ctx, "src"); err != nil {
		t.Fatal(err)
	}
	if err := ws.WriteFile(ctx, "README.md", []byte("changed"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, view := range []func() (fsView, error){
		func() (fsView, error) { return ws.At(ctx, "v1") },
		func() (fsView, error) { return st.Snapshot(ctx, "w@v1") },
	} {
		cp, err := view()
		if err != nil {
			t.Fatal(err)
		}
		out := filepath.Join(t.TempDir(), "out")
		if err := transfer.ExportDir(ctx, cp, ".", out, transfer.Options{}); err != nil {
			t.Fatalf("export checkpoint: %v", err)
		}
		got := withoutSymlinkOwners(hostTree(t, out))
		// The export's root takes the checkpoint root's attributes.
		diffTrees(t, withoutSymlinkOwners(want), got)
		// Writing into a checkpoint view is refused.
		err = transfer.ImportTar(ctx, cp, "x", bytes.NewReader(tarOf(t)), transfer.Options{})
		if err == nil {
			t.Errorf("import into a checkpoint view succeeded")
		}
	}
}

func TestSpecialFiles(t *testing.T) {
	ctx := context.Background()
	_, ws := newWorkspace(t)
	src := t.TempDir()
	if err := unix.Mkfifo(filepath.Join(src, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "file"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := transfer.ImportDir(ctx, ws.FS, "a", src, transfer.Options{})
	if !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("import with a FIFO: %v, want errors.ErrUnsupported", err)
	}
	var skipped []string
	opts := transfer.Options{Skip: func(name string, err error) error {
		skipped = append(skipped, name)
		return nil
	}}
	if err := transfer.ImportDir(ctx, ws.FS, "b", src, opts); err != nil {
		t.Fatal(err)
	}
	if len(skipped) != 1 || skipped[0] != "fifo" {
		t.Errorf("skipped %v", skipped)
	}
	if got, _ := ws.ReadFile(ctx, "b/file"); string(got) != "x" {
		t.Errorf("b/file = %q", got)
	}
}

func TestMergeIntoExisting(t *testing.T) {
	ctx := context.Background()
	_, ws := newWorkspace(t)
	if err := ws.MkdirAll(ctx, "t/d", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := ws.WriteFile(ctx, "t/keep", []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := ws.Symlink(ctx, "keep", "t/f"); err != nil {
		t.Fatal(err)
	}
	archive := tarOf(t, &tar.Header{Typeflag: tar.TypeReg, Name: "f", Linkname: "new"}, &tar.Header{Typeflag: tar.TypeReg, Name: "d/g", Linkname: "g"})
	if err := transfer.ImportTar(ctx, ws.FS, "t", bytes.NewReader(archive), transfer.Options{}); err != nil {
		t.Fatal(err)
	}
	if got, _ := ws.ReadFile(ctx, "t/keep"); string(got) != "keep" {
		t.Errorf("link target written through: %q", got)
	}
	if got, _ := ws.ReadFile(ctx, "t/f"); string(got) != "new" {
		t.Errorf("t/f = %q", got)
	}
	clash := tarOf(t, &tar.Header{Typeflag: tar.TypeReg, Name: "d", Linkname: "x"})
	if err := transfer.ImportTar(ctx, ws.FS, "t", bytes.NewReader(clash), transfer.Options{}); !errors.Is(err, fs.ErrExist) {
		t.Errorf("file over a directory: %v, want fs.ErrExist", err)
	}
}
