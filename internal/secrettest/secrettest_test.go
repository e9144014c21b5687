package secrettest

import (
	"os"
	"path/filepath"
	"testing"
)

// recorder is a testing.TB that records failures instead of failing.
type recorder struct {
	testing.TB
	failed bool
}

func (r *recorder) Errorf(string, ...any) { r.failed = true }
func (r *recorder) Fatalf(string, ...any) { r.failed = true }

func TestAbsentUnder(t *testing.T) {
	dir := t.TempDir()
	for name, data := range map[string]string{"meta.db": "rows", "blobs/ab/cd": "bytes with hunter2 inside"} {
		p := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tt := range []struct {
		dir, secret string
		fail        bool
	}{
		{dir, "hunter2", true},
		{dir, "absent", false},
		{t.TempDir(), "absent", true}, // empty: not a store
	} {
		r := &recorder{TB: t}
		AbsentUnder(r, tt.dir, tt.secret)
		if r.failed != tt.fail {
			t.Errorf("AbsentUnder(%s, %q) failed = %v, want %v", tt.dir, tt.secret, r.failed, tt.fail)
		}
	}
}
