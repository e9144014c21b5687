package transfer

import (
	"archive/tar"
	"errors"
	"io/fs"
	"strings"
	"testing"
)

func TestCleanName(t *testing.T) {
	tests := []struct {
		in, want string
		ok       bool
	}{
		{"a/b", "a/b", true},
		{"./a/b/", "a/b", true},
		{"./", ".", true},
		{"a/./b", "a/b", true},
		{"a//b", "a/b", true},
		{"", "", false},
		{"/etc/passwd", "", false},
		{"../x", "", false},
		{"a/../../x", "", false},
		{"a/..", "", false},
		{"a\x00b", "", false},
	}
	for _, tc := range tests {
		got, err := cleanName(tc.in)
		if tc.ok != (err == nil) || got != tc.want {
			t.Errorf("cleanName(%q) = %q, %v; want %q ok=%v", tc.in, got, err, tc.want, tc.ok)
		}
		if err != nil && !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("cleanName(%q): %v does not wrap fs.ErrInvalid", tc.in, err)
		}
	}
}

// FuzzCleanName checks that an accepted archive name is always a valid,
// relative, escape-free path.
func FuzzCleanName(f *testing.F) {
	for _, s := range []string{"a/b", "./a/", "../x", "/abs", "a/../b", "a//./b/", "..", "...", ".a/..b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		got, err := cleanName(name)
		if err != nil {
			return
		}
		if !validName(got) {
			t.Fatalf("cleanName(%q) = %q, not a valid path", name, got)
		}
		if strings.HasPrefix(name, "/") || strings.Contains("/"+name+"/", "/../") {
			t.Fatalf("cleanName(%q) accepted an escaping name as %q", name, got)
		}
	})
}

func TestSparseEntriesRefused(t *testing.T) {
	for _, h := range []*tar.Header{
		{Typeflag: tar.TypeGNUSparse, Name: "old", Size: 1 << 50},
		{Typeflag: tar.TypeReg, Name: "pax", Size: 1 << 50, PAXRecords: map[string]string{"GNU.sparse.realsize": "1125899906842624"}},
	} {
		if _, err := tarEntry(h); !errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("%s: %v, want errors.ErrUnsupported", h.Name, err)
		}
		if got := tarTypeName(h); got != "sparse file" {
			t.Errorf("%s described as %q", h.Name, got)
		}
	}
	if _, err := tarEntry(&tar.Header{Typeflag: tar.TypeReg, Name: "plain", Size: 1}); err != nil {
		t.Errorf("plain file: %v", err)
	}
}
