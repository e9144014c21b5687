package nearname_test

import (
	"context"
	"io/fs"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/forkspace/forkspace/nearname"
)

// mapLister lists an fstest.MapFS.
type mapLister fstest.MapFS

func (m mapLister) ReadDir(_ context.Context, name string) ([]fs.DirEntry, error) {
	return fs.ReadDir(fstest.MapFS(m), name)
}

func TestFind(t *testing.T) {
	tree := mapLister{
		"calc.py":     {Data: []byte("1")},
		"src/main.go": {Data: []byte("2")},
		"README.md":   {Data: []byte("3")},
		"zzzzzz":      {Data: []byte("4")},
		"lnk":         {Data: []byte("5")},
		"lnk2":        {Data: []byte("6")},
	}
	for _, c := range []struct {
		p    string
		want nearname.Hint
	}{
		{"calc", nearname.Hint{Near: "calc.py"}},                // without the extension
		{"clac.py", nearname.Hint{Near: "calc.py"}},             // a typo
		{"readme.md", nearname.Hint{Near: "README.md"}},         // another case
		{"src/mian.go", nearname.Hint{Near: "src/main.go"}},     // in a directory
		{"sr/main.go", nearname.Hint{Near: "src"}},              // the directory mistyped
		{"missing/b.txt", nearname.Hint{MissingDir: "missing"}}, // nothing near
		{"a/b/c", nearname.Hint{MissingDir: "a"}},               // the topmost missing directory
		{"entirely-different", nearname.Hint{}},                 // nothing near, directory there
		{"calc.py", nearname.Hint{}},                            // exists: no suggestion of itself
		{"lnk", nearname.Hint{}},                                // exists (a dangling link, say): none of a neighbour either
		{".", nearname.Hint{}},                                  // the root
	} {
		if got := nearname.Find(t.Context(), tree, c.p); got != c.want {
			t.Errorf("Find(%q) = %+v, want %+v", c.p, got, c.want)
		}
	}
}

func FuzzDistance(f *testing.F) {
	f.Add("calc", "calc.py")
	f.Add("", "x")
	f.Fuzz(func(t *testing.T, a, b string) {
		d := nearname.Distance(a, b)
		if d < 0 || d != nearname.Distance(b, a) {
			t.Fatalf("Distance(%q, %q) = %d, not symmetric or negative", a, b, d)
		}
		la, lb := len(strings.ToLower(a)), len(strings.ToLower(b)) // invalid UTF-8 lowers to U+FFFD
		if la <= 800 && lb <= 800 && d > max(la, lb) {
			t.Fatalf("Distance(%q, %q) = %d beyond the longer length", a, b, d)
		}
	})
}
