package transfer_test

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"hash/crc32"
	"io/fs"
	"testing"
	"time"

	"github.com/forkspace/forkspace/transfer"
)

// zipEntry is one entry of a zip archive built by zipOf (mode 0: a
// regular file 0644).
type zipEntry struct {
	name, body string
	mode       fs.FileMode
}

func zipOf(t interface{ Fatal(...any) }, es ...zipEntry) []byte {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for _, e := range es {
		h := &zip.FileHeader{Name: e.name, Method: zip.Deflate, Modified: time.Unix(1_700_000_000, 0)}
		if e.mode == 0 {
			e.mode = 0o644
		}
		h.SetMode(e.mode)
		w, err := zw.CreateHeader(h)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(e.body)); err != nil {
			t.Fatal(err)
		}
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// zipKept is what a zip archive keeps of a tree: not the root directory
// itself, no owners, whole-second times, and each name of a hard-linked
// file as a file of its own.
func zipKept(in tree) tree {
	out := tree{}
	for name, n := range in {
		if name == "." {
			continue
		}
		n.UID, n.GID, n.Links = 0, 0, ""
		n.Mtime = time.Unix(0, n.Mtime).Truncate(time.Second).UnixNano()
		if n.Type == "symlink" {
			n.Mtime = 0
		}
		out[name] = n
	}
	return out
}

// TestZipRoundTrip exports the host test tree (files, modes, empty and
// read-only directories, symbolic links, hard links) to a zip archive and
// imports it again: what zip keeps comes back.
func TestZipRoundTrip(t *testing.T) {
	ctx := context.Background()
	_, ws := newWorkspace(t)
	src := t.TempDir()
	makeHostTree(t, src)
	if err := transfer.ImportDir(ctx, ws.FS, "a", src, transfer.Options{}); err != nil {
		t.Fatal(err)
	}
	var archive bytes.Buffer
	if err := transfer.ExportZip(ctx, ws.FS, "a", &archive, transfer.Options{}); err != nil {
		t.Fatalf("export zip: %v", err)
	}
	if !transfer.IsZip(archive.Bytes()) {
		t.Fatalf("export wrote no zip archive: % x", archive.Bytes()[:4])
	}
	if err := transfer.ImportZip(ctx, ws.FS, "b", bytes.NewReader(archive.Bytes()), int64(archive.Len()), transfer.Options{}); err != nil {
		t.Fatalf("import zip: %v", err)
	}
	diffTrees(t, zipKept(wsTree(t, ws.FS, "a")), zipKept(wsTree(t, ws.FS, "b")))
}

// TestZipRefusedChangesNothing: a zip archive with an escaping name (after
// good entries), a damaged body or a damaged directory is refused with
// fs.ErrInvalid and the workspace is left as it was.
func TestZipRefusedChangesNothing(t *testing.T) {
	ctx := context.Background()
	_, ws := newWorkspace(t)
	if err := ws.WriteFile(ctx, "keep.txt", []byte("keep"), 0o644); err != nil {
		t.Fatal(err)
	}
	good := []zipEntry{{name: "d/f", body: "data"}, {name: "host", body: "/etc/passwd", mode: fs.ModeSymlink | 0o777}, {name: "keep.txt", body: "replaced"}}
	escaping := zipOf(t, append(good, zipEntry{name: "../escape", body: "x"})...)
	absolute := zipOf(t, append(good, zipEntry{name: "/etc/x", body: "x"})...)
	// A body whose checksum does not match: flip a byte of the stored CRC
	// of the last entry in its local header.
	damaged := zipOf(t, good...)
	crc := crc32.ChecksumIEEE([]byte("replaced"))
	at := bytes.LastIndex(damaged, []byte{byte(crc), byte(crc >> 8), byte(crc >> 16), byte(crc >> 24)})
	if at < 0 {
		t.Fatal("no CRC of the last entry in the archive")
	}
	damaged = bytes.Clone(damaged)
	damaged[at] ^= 0xff
	for name, archive := range map[string][]byte{
		"escaping name": escaping, "absolute name": absolute, "bad checksum": damaged,
		"cut directory": zipOf(t, good...)[:60], "not a zip": []byte("PK\x03\x04 but nothing more"),
	} {
		err := transfer.ImportZip(ctx, ws.FS, ".", bytes.NewReader(archive), int64(len(archive)), transfer.Options{})
		if !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("%s: %v, want fs.ErrInvalid", name, err)
		}
		unchanged(t, ws)
	}
}

func TestArchiveFormat(t *testing.T) {
	for _, c := range []struct {
		name   string
		format transfer.Format
		gzip   bool
		err    bool
	}{
		{"out", transfer.FormatDir, false, false},
		{"out.d", transfer.FormatDir, false, false},
		{"backup.2026-11-24", transfer.FormatDir, false, false},
		{"dir/.tar", transfer.FormatDir, false, false}, // a hidden name, not an archive
		{"out.tar", transfer.FormatTar, false, false},
		{"out.tar.gz", transfer.FormatTar, true, false},
		{"OUT.TGZ", transfer.FormatTar, true, false},
		{"out.zip", transfer.FormatZip, false, false},
		{"a.tar.xz", 0, false, true},
		{"a.tar.zst", 0, false, true},
		{"a.7z", 0, false, true},
		{"a.gz", 0, false, true},
	} {
		f, gz, err := transfer.ArchiveFormat(c.name)
		if c.err {
			var fe *transfer.FormatError
			if !errors.As(err, &fe) || !errors.Is(err, errors.ErrUnsupported) || !errors.Is(err, fs.ErrInvalid) {
				t.Errorf("%s: %v, want a *FormatError", c.name, err)
			}
			continue
		}
		if err != nil || f != c.format || gz != c.gzip {
			t.Errorf("%s: %v %v %v, want %v %v", c.name, f, gz, err, c.format, c.gzip)
		}
	}
}
