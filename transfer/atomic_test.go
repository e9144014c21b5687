package transfer_test

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	forkspace "github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/gc"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/transfer"
)

// quotaTree is issue 16's tree: t/a/{1,2,3} and t/b/{1,2,3} of 30,000
// bytes each, 180,000 bytes in all.
func quotaTree(t *testing.T) string {
	dir := filepath.Join(t.TempDir(), "t")
	for _, d := range []string{"a", "b"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
		for i := 1; i <= 3; i++ {
			if err := os.WriteFile(filepath.Join(dir, d, fmt.Sprint(i)), pattern(30000, byte(i)+d[0]), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	return dir
}

// unchanged checks that ws holds only keep.txt, as before the import.
func unchanged(t *testing.T, ws *forkspace.Workspace) {
	t.Helper()
	info, err := ws.Info(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if info.Entries != 1 || info.Bytes != 4 {
		t.Fatalf("after a refused import: entries %d, bytes %d (want only keep.txt)", info.Entries, info.Bytes)
	}
	if got, err := ws.ReadFile(context.Background(), "keep.txt"); err != nil || string(got) != "keep" {
		t.Fatalf("keep.txt: %q %v", got, err)
	}
}

// TestImportPastQuotaChangesNothing is issue 16 item 2: an import past a
// 100,000-byte quota, from a directory, a tar and a tgz stream, exits with
// errdefs.ErrQuota and leaves the workspace exactly as it was.
func TestImportPastQuotaChangesNothing(t *testing.T) {
	ctx := context.Background()
	st := openStore(t)
	ws, err := st.Create(ctx, "q", forkspace.CreateOptions{Quota: meta.Quota{MaxBytes: 100000}})
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.WriteFile(ctx, "keep.txt", []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	dir := quotaTree(t)
	if err := transfer.ImportDir(ctx, ws.FS, "p", dir, transfer.Options{}); !errors.Is(err, errdefs.ErrQuota) {
		t.Fatalf("import dir: %v, want ErrQuota", err)
	}
	unchanged(t, ws)

	// The same tree as a tar and a tgz stream.
	src, err := st.Create(ctx, "src", forkspace.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := transfer.ImportDir(ctx, src.FS, ".", dir, transfer.Options{}); err != nil {
		t.Fatal(err)
	}
	for _, gz := range []bool{false, true} {
		var buf bytes.Buffer
		if err := transfer.ExportTar(ctx, src.FS, ".", &buf, transfer.Options{Gzip: gz}); err != nil {
			t.Fatal(err)
		}
		if err := transfer.ImportTar(ctx, ws.FS, "p", &buf, transfer.Options{}); !errors.Is(err, errdefs.ErrQuota) {
			t.Fatalf("import tar (gzip %v): %v, want ErrQuota", gz, err)
		}
		unchanged(t, ws)
	}
}

// TestImportFailureChangesNothing: an import that fails after some entries
// were written (a stream cut off, a bad entry late in the archive) leaves
// nothing of them, also after a reopen.
func TestImportFailureChangesNothing(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := forkspace.Open(ctx, forkspace.Options{Dir: dir, Logger: discard})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := st.Create(ctx, "w", forkspace.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.WriteFile(ctx, "keep.txt", []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	good := []*tar.Header{
		{Typeflag: tar.TypeDir, Name: "d/"},
		{Typeflag: tar.TypeReg, Name: "d/f", Linkname: "data"},
		{Typeflag: tar.TypeSymlink, Name: "host", Linkname: "/etc/passwd"},
		{Typeflag: tar.TypeReg, Name: "keep.txt", Linkname: "replaced"},
	}
	archive := tarOf(t, append(good, &tar.Header{Typeflag: tar.TypeReg, Name: "../escape", Linkname: "x"})...)
	if err := transfer.ImportTar(ctx, ws.FS, ".", bytes.NewReader(archive), transfer.Options{}); !errors.Is(err, os.ErrInvalid) {
		t.Fatalf("bad late entry: %v", err)
	}
	unchanged(t, ws)

	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	if _, err := zw.Write(tarOf(t, good...)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	// Cut midway, and cut in the gzip trailer (after the tar's end).
	for _, n := range []int{gz.Len() / 2, gz.Len() - 4} {
		cut := io.LimitReader(bytes.NewReader(gz.Bytes()), int64(n))
		if err := transfer.ImportTar(ctx, ws.FS, "into", cut, transfer.Options{}); !errors.Is(err, os.ErrInvalid) {
			t.Fatalf("a stream cut at %d of %d bytes: %v", n, gz.Len(), err)
		}
		unchanged(t, ws)
	}

	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st, err = forkspace.Open(ctx, forkspace.Options{Dir: dir, Logger: discard})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if ws, err = st.Workspace(ctx, "w"); err != nil {
		t.Fatal(err)
	}
	unchanged(t, ws)
}

// TestBulkImportFailureLeavesNothing: an import refused late, after
// thousands of small files were stored ahead (hashed and stored by the
// pipeline's workers, inline bodies stored ahead of the batch's commit,
// tree nodes of the batch's folds ahead: FoldRows 64), leaves the
// workspace as it was and holds nothing: every upload intent is released,
// so a collection with no grace takes all it stored.
func TestBulkImportFailureLeavesNothing(t *testing.T) {
	ctx := context.Background()
	st := openStoreWith(t, forkspace.Options{FoldRows: 64})
	ws, err := st.Create(ctx, "w", forkspace.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := ws.WriteFile(ctx, "keep.txt", []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	// 1,500 files of 12 KiB (inline, 18 MiB: past one early store; 256
	// distinct contents) and
	// 60 of 100 KiB (chunked), then an entry that escapes.
	var hs []*tar.Header
	for i := range 1560 {
		size := 12 << 10
		if i%26 == 0 {
			size = 100 << 10
		}
		hs = append(hs, &tar.Header{Typeflag: tar.TypeReg, Name: fmt.Sprintf("d%d/f%04d", i%9, i), Linkname: string(pattern(size, byte(i)))})
	}
	hs = append(hs, &tar.Header{Typeflag: tar.TypeSymlink, Name: "d1/host", Linkname: "/etc/passwd"})
	archive := tarOf(t, append(hs, &tar.Header{Typeflag: tar.TypeReg, Name: "../escape", Linkname: "x"})...)
	if err := transfer.ImportTar(ctx, ws.FS, "t", bytes.NewReader(archive), transfer.Options{}); !errors.Is(err, os.ErrInvalid) {
		t.Fatalf("bad late entry: %v", err)
	}
	unchanged(t, ws)
	r, err := st.GC(ctx, forkspace.GCOptions{Grace: gc.NoGrace})
	if err != nil {
		t.Fatal(err)
	}
	if r.Plan.Young != (gc.Counts{}) || r.Reclaimed.Bodies < 250 || r.Reclaimed.Blobs == 0 || r.Reclaimed.Nodes == 0 {
		t.Fatalf("after a refused import: young %+v (held by a pending intent?), reclaimed %+v", r.Plan.Young, r.Reclaimed)
	}
}
