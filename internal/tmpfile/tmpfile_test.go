package tmpfile

import (
	"io"
	"os"
	"testing"
)

// TestUnlinked: the file reads back what was written and has no name in
// the temporary directory.
func TestUnlinked(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	f, err := Unlinked("x-*")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt([]byte("kept"), 0); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 4)
	if _, err := f.ReadAt(b, 0); err != nil || string(b) != "kept" {
		t.Fatalf("read back %q, %v", b, err)
	}
	if names, _ := os.ReadDir(dir); len(names) != 0 {
		t.Fatalf("temporary directory holds %v", names)
	}
	t.Setenv("TMPDIR", "/nonexistent/forkspace-test")
	if _, err := Unlinked("x-*"); err == nil {
		t.Fatal("no error from an unwritable temporary directory")
	}
}

// TestLog: appends read back in order at their offsets; an empty log has
// no file; a log that cannot create its file stays empty.
func TestLog(t *testing.T) {
	t.Setenv("TMPDIR", t.TempDir())
	var l Log
	if n, err := l.ReadAt(make([]byte, 1), 0); n != 0 || err != io.EOF {
		t.Fatalf("empty log read %d, %v", n, err)
	}
	for _, p := range []string{"ab", "", "cde"} {
		if err := l.Append([]byte(p)); err != nil {
			t.Fatal(err)
		}
	}
	b := make([]byte, l.Size())
	if _, err := l.ReadAt(b, 0); err != nil || string(b) != "abcde" || l.Size() != 5 {
		t.Fatalf("read back %q (size %d), %v", b, l.Size(), err)
	}
	if err := l.Close(); err != nil || l.Size() != 0 {
		t.Fatalf("close: %v, size %d", err, l.Size())
	}
	t.Setenv("TMPDIR", "/nonexistent/forkspace-test")
	if err := l.Append([]byte("x")); err == nil || l.Size() != 0 {
		t.Fatalf("append without a temporary directory: %v, size %d", err, l.Size())
	}
}
