package tools

import (
	"strings"
	"testing"
)

// FuzzClean: a cleaned path is "." or a relative path without "." or ".."
// components, and a path that fails is refused with a tool error.
func FuzzClean(f *testing.F) {
	for _, s := range []string{"", "/", "a/b", "/a/../b", "../x", "a/../../x", "./a//b/", "..", "/..", "a/..", "a\x00b", ".../x"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		c, err := clean(p)
		if err != nil {
			if _, ok := err.(*toolError); !ok {
				t.Fatalf("clean(%q): %T %v, want a tool error", p, err, err)
			}
			return
		}
		if c == "." {
			return
		}
		if strings.HasPrefix(c, "/") || strings.HasSuffix(c, "/") {
			t.Fatalf("clean(%q) = %q: not relative", p, c)
		}
		for _, part := range strings.Split(c, "/") {
			if part == "" || part == "." || part == ".." {
				t.Fatalf("clean(%q) = %q: bad component %q", p, c, part)
			}
		}
	})
}
