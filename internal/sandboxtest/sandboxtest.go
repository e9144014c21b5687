// Package sandboxtest gives tests of the sandbox (and of the tools and
// servers that run it) temporary directories its commands can reach.
//
// A root server runs bubblewrap as an unprivileged host uid, which must be
// able to search every ancestor of the work dir; the temporary root of a
// test (mode 0700) is not, so Dir makes it searchable by others.
package sandboxtest

import (
	"os"
	"path/filepath"
	"testing"
)

// Dir returns a new temporary directory of t whose ancestors the
// sandbox's host uids can search.
func Dir(t testing.TB) string {
	t.Helper()
	d := t.TempDir()
	if err := os.Chmod(filepath.Dir(d), 0o711); err != nil {
		t.Fatal(err)
	}
	return d
}

// WorkDir returns a path for a work dir in a new Dir of t.
func WorkDir(t testing.TB) string {
	return filepath.Join(Dir(t), "work")
}
