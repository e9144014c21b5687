package fileblob

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/sys/unix"
)

// dirent encodes one linux_dirent64 record, padded to 8 bytes.
func dirent(ino uint64, typ byte, name string) []byte {
	reclen := (19 + len(name) + 1 + 7) &^ 7
	b := make([]byte, reclen)
	binary.NativeEndian.PutUint64(b[0:8], ino)
	binary.NativeEndian.PutUint16(b[16:18], uint16(reclen))
	b[18] = typ
	copy(b[19:], name)
	return b
}

// TestDirentNames: of the records getdents returns, direntNames names the
// regular files, skips deleted entries and other types, asks the file
// system the type it did not record (DT_UNKNOWN: a file, a directory, a
// name gone meanwhile), and refuses a truncated or malformed record.
func TestDirentNames(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "unknown-file"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "unknown-dir"), 0o700); err != nil {
		t.Fatal(err)
	}
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close(fd)
	var b []byte
	for _, d := range []struct {
		ino  uint64
		typ  byte
		name string
	}{
		{1, unix.DT_DIR, "."}, {2, unix.DT_REG, "file"}, {0, unix.DT_REG, "deleted"},
		{3, unix.DT_LNK, "link"}, {4, unix.DT_UNKNOWN, "unknown-file"},
		{5, unix.DT_UNKNOWN, "unknown-dir"}, {6, unix.DT_UNKNOWN, "unknown-gone"},
		{7, unix.DT_REG, "another"},
	} {
		b = append(b, dirent(d.ino, d.typ, d.name)...)
	}
	var names []string
	if err := direntNames(fd, b, func(name []byte) { names = append(names, string(name)) }); err != nil {
		t.Fatal(err)
	}
	if want := []string{"file", "unknown-file", "another"}; !slices.Equal(names, want) {
		t.Fatalf("names %q, want %q", names, want)
	}
	for _, bad := range [][]byte{b[:10], append(dirent(2, unix.DT_REG, "file"), 1, 2, 3)} {
		if err := direntNames(fd, bad, func([]byte) {}); err == nil {
			t.Fatalf("%d bytes of records: no error", len(bad))
		}
	}
}

// FuzzDirentNames feeds direntNames arbitrary bytes as getdents records:
// it never panics or loops, and every name it reports is a slice of the
// input free of NUL bytes.
func FuzzDirentNames(f *testing.F) {
	f.Add(append(dirent(2, unix.DT_REG, "file"), dirent(0, unix.DT_REG, "gone")...))
	f.Add(dirent(3, unix.DT_DIR, "sub"))
	f.Add([]byte{1, 2, 3})
	dir := f.TempDir()
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY, 0)
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { unix.Close(fd) })
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = direntNames(fd, b, func(name []byte) {
			if slices.Contains(name, 0) || len(name) > len(b) {
				t.Fatalf("name %q from %d bytes of records", name, len(b))
			}
		})
	})
}
