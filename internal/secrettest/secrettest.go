package secrettest

import (
	"bytes"
	"io/fs"
	"os"
	"path/filepath"
	"testing"
)

// AbsentUnder fails the test for every file under dir that contains one of
// secrets, and when dir holds fewer than two regular files (then it is not
// the store the caller meant).
func AbsentUnder(tb testing.TB, dir string, secrets ...string) {
	tb.Helper()
	files := 0
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		files++
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		for _, s := range secrets {
			if bytes.Contains(b, []byte(s)) {
				tb.Errorf("%s holds the secret %q", p, s)
			}
		}
		return nil
	})
	if err != nil {
		tb.Fatalf("scan %s: %v", dir, err)
	}
	if files < 2 {
		tb.Fatalf("found %d files under %s: not a store", files, dir)
	}
}
