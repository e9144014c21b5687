package transfer_test

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/meta/sqlitemeta"
	"github.com/forkspace/forkspace/transfer"
	"github.com/forkspace/forkspace/vfs"
)

// batchTree writes, into directory d of f, more small files than one
// read-ahead fetches (readAheadBatch), inline and chunked and empty ones
// interleaved with a large file, links, a subdirectory and extended
// attributes, and returns the body of the inline file d/f050.
func batchTree(t *testing.T, f *vfs.FS) []byte {
	t.Helper()
	ctx := context.Background()
	must(t, f.MkdirAll(ctx, "d/m-sub", 0o755))
	var victim []byte
	for i := range 100 {
		var data []byte
		switch i % 5 {
		case 0:
			data = pattern(100+i, byte(i)) // inline
		case 1:
			data = pattern(40<<10+i, byte(i)) // chunked, read ahead
		case 2: // empty
		case 3:
			data = []byte("same body in many files")
		case 4:
			data = pattern(10<<10, byte(i))
		}
		name := fmt.Sprintf("d/f%03d", i)
		must(t, f.WriteFile(ctx, name, data, 0o644))
		if i%7 == 0 {
			must(t, f.Setxattr(ctx, name, "user.i", []byte(fmt.Sprint(i))))
		}
		if i == 50 {
			victim = data
		}
	}
	must(t, f.WriteFile(ctx, "d/m-big", pattern(600<<10, 1), 0o644)) // not read ahead
	must(t, f.WriteFile(ctx, "d/m-sub/inner", []byte("inner"), 0o644))
	must(t, f.Symlink(ctx, "f000", "d/f000-link"))
	must(t, f.Symlink(ctx, "nowhere", "d/f001-dangling"))
	return victim
}

// TestExportBatches exports a directory whose small files are read ahead
// in several batches: the tar and the host copy hold what the workspace
// holds, file by file.
func TestExportBatches(t *testing.T) {
	ctx := context.Background()
	_, ws := newWorkspace(t)
	batchTree(t, ws.FS)
	want := wsTree(t, ws.FS, "d")
	delete(want, ".")
	var buf bytes.Buffer
	if err := transfer.ExportTar(ctx, ws.FS, "d", &buf, transfer.Options{}); err != nil {
		t.Fatal(err)
	}
	diffTrees(t, want, tarTree(t, bytes.NewReader(buf.Bytes())))
	assertTarXattrs(t, buf.Bytes())

	out := filepath.Join(t.TempDir(), "out")
	if err := transfer.ExportDir(ctx, ws.FS, "d", out, transfer.Options{}); err != nil {
		t.Fatal(err)
	}
	host := withoutSymlinkOwners(hostTree(t, out))
	delete(host, ".")
	diffTrees(t, withoutSymlinkOwners(want), host)
}

// assertTarXattrs checks the extended attributes of the files batchTree
// gives some.
func assertTarXattrs(t *testing.T, archive []byte) {
	t.Helper()
	tr := tar.NewReader(bytes.NewReader(archive))
	seen := 0
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		var i int
		if _, err := fmt.Sscanf(h.Name, "f%03d", &i); err != nil || h.Typeflag != tar.TypeReg {
			continue
		}
		v, ok := h.PAXRecords["SCHILY.xattr.user.i"]
		if (i%7 == 0) != ok || ok && v != fmt.Sprint(i) {
			t.Errorf("%s: xattr %q (%v)", h.Name, v, ok)
		}
		seen++
	}
	if seen != 100 {
		t.Errorf("archive has %d of the 100 files", seen)
	}
}

// TestExportMissingBody: an inline body gone from the store fails the
// export with errdefs.ErrCorrupt, and neither the tar nor the host copy
// holds any part of that file (the entries before it are whole).
func TestExportMissingBody(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st := openStoreAt(t, dir)
	ws, err := st.Create(ctx, "w", forkspace.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	victim := batchTree(t, ws.FS)
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	dropInline(t, filepath.Join(dir, "meta.db"), cas.Sum(victim))
	st = openStoreAt(t, dir) // a cold cache
	ws, err = st.Workspace(ctx, "w")
	if err != nil {
		t.Fatal(err)
	}

	var buf bytes.Buffer
	err = transfer.ExportTar(ctx, ws.FS, "d", &buf, transfer.Options{})
	if !errors.Is(err, errdefs.ErrCorrupt) {
		t.Fatalf("export tar: %v, want errdefs.ErrCorrupt", err)
	}
	tr := tar.NewReader(&buf)
	for {
		h, err := tr.Next()
		if err != nil {
			break // the stream ends where the export stopped
		}
		if h.Name == "f050" {
			t.Fatal("the archive holds the damaged file")
		}
		if n, err := io.Copy(io.Discard, tr); err != nil || n != h.Size {
			t.Fatalf("%s: %d of %d bytes, %v", h.Name, n, h.Size, err)
		}
	}

	out := filepath.Join(t.TempDir(), "out")
	err = transfer.ExportDir(ctx, ws.FS, "d", out, transfer.Options{})
	if !errors.Is(err, errdefs.ErrCorrupt) {
		t.Fatalf("export dir: %v, want errdefs.ErrCorrupt", err)
	}
	if _, err := os.Lstat(filepath.Join(out, "f050")); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("the host copy holds the damaged file: %v", err)
	}
}

// openStoreAt opens the store in dir, closed at the end of the test.
func openStoreAt(t *testing.T, dir string) *forkspace.Store {
	t.Helper()
	st, err := forkspace.Open(context.Background(), forkspace.Options{Dir: dir, Logger: discard})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// dropInline deletes inline body h from the closed store's metadata.
func dropInline(t *testing.T, path string, h cas.Hash) {
	t.Helper()
	ctx := context.Background()
	m, err := sqlitemeta.Open(ctx, path, sqlitemeta.Options{Logger: discard})
	if err != nil {
		t.Fatal(err)
	}
	defer m.Close()
	err = m.Update(ctx, func(tx meta.Tx) error {
		n, err := tx.DeleteInline([]cas.Hash{h}, time.Now().Add(time.Hour))
		if err == nil && n != 1 {
			err = fmt.Errorf("deleted %d bodies, want 1", n)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
}

// must fails t on err.
func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}
