package tmpfile

import (
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
