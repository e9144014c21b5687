package sandbox

import "testing"

func TestMatcher(t *testing.T) {
	m := newMatcher(DefaultIgnore)
	tests := []struct {
		path string
		want bool
	}{
		{".cache", true},
		{".cache/go-build/x", true},
		{"src/.cache", false},
		{"node_modules/.cache", true},
		{"a/b/node_modules/.cache/x", true},
		{"node_modules/cache", false},
		{"node_modules", false},
		{"__pycache__", true},
		{"pkg/__pycache__/m.pyc", true},
		{"pkg/__pycache__x", false},
		{"a.txt", false},
	}
	for _, tc := range tests {
		if got := m.match(tc.path); got != tc.want {
			t.Errorf("match(%q) = %v, want %v", tc.path, got, tc.want)
		}
	}
	anchored := newMatcher([]string{"/build/*.o"})
	if !anchored.match("build/x.o") || anchored.match("src/build/x.o") {
		t.Error("anchored pattern")
	}
}

func FuzzMatcher(f *testing.F) {
	for _, s := range []string{"a", "a/b", "node_modules/.cache", "x/__pycache__/y", "/", "a//b", ""} {
		f.Add(s)
	}
	m := newMatcher(append([]string{"a/*", "**/b/c"}, DefaultIgnore...))
	f.Fuzz(func(t *testing.T, p string) {
		// A matching path makes everything beneath it match.
		if m.match(p) && !m.match(p+"/child") {
			t.Errorf("%q matches but %q does not", p, p+"/child")
		}
	})
}
