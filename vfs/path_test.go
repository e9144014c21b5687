package vfs

import (
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"
	"testing"

	"github.com/forkspace/forkspace/errdefs"
)

func TestCleanPath(t *testing.T) {
	tests := []struct {
		in, want string
		err      error
	}{
		{"", ".", nil},
		{"/", ".", nil},
		{".", ".", nil},
		{"a", "a", nil},
		{"/a/b", "a/b", nil},
		{"a/./b/../c", "a/c", nil},
		{"a//b/", "a/b", nil},
		{"///a", "a", nil},
		{"a/..", ".", nil},
		{"..", "", fs.ErrInvalid},
		{"../a", "", fs.ErrInvalid},
		{"/../a", "", fs.ErrInvalid},
		{"a/../..", "", fs.ErrInvalid},
		{"a/b/../../../c", "", fs.ErrInvalid},
		{"a\x00b", "", fs.ErrInvalid},
		{strings.Repeat("x", 256), "", errdefs.ErrNameTooLong},
		{strings.Repeat("x/", 2100), "", errdefs.ErrNameTooLong},
	}
	for _, tt := range tests {
		got, err := CleanPath(tt.in)
		if tt.err != nil {
			var pe *fs.PathError
			if !errors.Is(err, tt.err) || !errors.As(err, &pe) {
				t.Errorf("CleanPath(%.20q) error %v, want %v", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("CleanPath(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}

func TestCheckPathCauses(t *testing.T) {
	tests := map[string]string{
		"/a":    "absolute path not allowed",
		"../a":  "path escapes workspace",
		"a\x00": "NUL byte in path",
	}
	for in, cause := range tests {
		if err := validPath("open", in); err == nil || !strings.Contains(err.Error(), cause) {
			t.Errorf("validPath(%q) = %v, want cause %q", in, err, cause)
		}
	}
}

// FuzzPath checks the validator against fs.ValidPath and CleanPath's
// promises: its output is valid, idempotent and never escapes.
func FuzzPath(f *testing.F) {
	for _, s := range []string{"", ".", "a/b", "/a", "../a", "a/../b", "a//b", "a\x00", "./a", "a/.", strings.Repeat("n", 300)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		err := checkPath(p)
		if err == nil && !fs.ValidPath(p) {
			t.Fatalf("checkPath accepted %q, which fs.ValidPath rejects", p)
		}
		if err != nil && !errors.Is(err, fs.ErrInvalid) && !errors.Is(err, errdefs.ErrNameTooLong) {
			t.Fatalf("checkPath(%q) = %v: untyped", p, err)
		}
		if err == nil && fs.ValidPath(p) {
			for _, e := range splitPath(p) {
				if len(e) > MaxNameLen || strings.IndexByte(e, 0) >= 0 {
					t.Fatalf("checkPath accepted element %q", e)
				}
			}
		}
		c, err := CleanPath(p)
		if err != nil {
			var pe *fs.PathError
			if !errors.As(err, &pe) {
				t.Fatalf("CleanPath(%q) error %v is not a PathError", p, err)
			}
			return
		}
		if checkPath(c) != nil {
			t.Fatalf("CleanPath(%q) = %q, which is invalid", p, c)
		}
		if again, err := CleanPath(c); err != nil || again != c {
			t.Fatalf("CleanPath not idempotent: %q -> %q -> %q, %v", p, c, again, err)
		}
		if c != path.Clean("/" + c)[1:] && c != "." {
			t.Fatalf("CleanPath(%q) = %q is not clean", p, c)
		}
	})
}

// TestLongPathErrorIsShort: a path past MaxPathLen is named by a prefix
// and its length, once; the message stays short however long the path.
func TestLongPathErrorIsShort(t *testing.T) {
	for _, p := range []string{strings.Repeat("a", 12000), strings.Repeat("ab/", 4000), "../" + strings.Repeat("é", 6000), strings.Repeat("x", 5000) + "\x00"} {
		_, err := CleanPath(p)
		if err == nil || len(err.Error()) > 2*maxShownPath+100 || !strings.Contains(err.Error(), "bytes)") {
			t.Errorf("CleanPath of a %d-byte path: %d-byte error %.300q", len(p), len(fmt.Sprint(err)), fmt.Sprint(err))
		}
	}
}
