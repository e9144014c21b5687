package tools_test

import (
	"fmt"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/forkspace/forkspace/tools"
)

func TestGlob(t *testing.T) {
	e := newEnv(t, tools.Options{})
	for _, p := range []string{"src/a.go", "src/b_test.go", "src/sub/c.go", "docs/x.md", ".git/config", "node_modules/m/i.js", "src/node_modules/n.go"} {
		e.put(p, "x")
	}
	tests := []struct{ pattern, want string }{
		{"**/*.go", "src/a.go\nsrc/b_test.go\nsrc/sub/c.go"},
		{"/src/*.go", "src/a.go\nsrc/b_test.go"},
		{"src/**", "src/a.go\nsrc/b_test.go\nsrc/sub/\nsrc/sub/c.go"},
		{"**/*.{md,js}", "docs/x.md"},
		{"node_modules/**/*.js", "node_modules/m/i.js"},
		{"*.txt", "no paths match *.txt"},
		{"nope/**", "no paths match nope/**"},
	}
	for _, tc := range tests {
		if got := e.ok("glob", M{"pattern": tc.pattern}); got != tc.want {
			t.Errorf("glob %s = %q, want %q", tc.pattern, got, tc.want)
		}
	}
	if got := e.ok("glob", M{"pattern": "**/*.go", "limit": 2}); !strings.HasSuffix(got, "showing the first 2. Narrow the pattern or raise limit") {
		t.Errorf("glob limit = %q", got)
	}
	e.fails("glob", M{"pattern": "src/[a"}, "invalid glob")
	e.fails("glob", M{"pattern": ""}, "invalid glob")
}

func TestGrep(t *testing.T) {
	e := newEnv(t, tools.Options{MaxGrepFileBytes: 1 << 16})
	e.put("src/a.go", "package a\n\n// TODO: fix\nfunc A() {}\n// todo later\n")
	e.put("src/b.py", "def b():\n    pass  # TODO\n")
	e.put("docs/readme.md", "one\ntwo\nthree TODO\nfour\nfive\nsix\nseven TODO\n")
	e.put("bin/blob", "TODO\x00\x01binary")
	e.put("huge.log", strings.Repeat("TODO filler line\n", 5000))
	e.put(".git/HEAD", "TODO in git")
	e.put("node_modules/x/y.js", "TODO in deps")
	tests := []struct {
		name string
		args M
		want string
	}{
		{"regex", M{"pattern": "TODO"},
			"docs/readme.md:3:three TODO\ndocs/readme.md:7:seven TODO\nsrc/a.go:3:// TODO: fix\nsrc/b.py:2:    pass  # TODO\n" +
				"(1 binary files matched; not shown)\n(1 files larger than 65536 bytes were not searched)"},
		{"ignore case, glob", M{"pattern": "todo", "ignore_case": true, "glob": "*.go"}, "src/a.go:3:// TODO: fix\nsrc/a.go:5:// todo later"},
		{"literal", M{"pattern": "A() {", "literal": true, "path": "src"}, "src/a.go:4:func A() {}"},
		{"literal ignore case", M{"pattern": "FUNC a(", "literal": true, "ignore_case": true, "glob": "src/**"}, "src/a.go:4:func A() {}"},
		{"regex classes", M{"pattern": `^def \w+\(`, "path": "src"}, "src/b.py:1:def b():"},
		{"path is a file", M{"pattern": "T.DO", "path": "src/a.go"}, "src/a.go:3:// TODO: fix"},
		{"context", M{"pattern": "TODO", "path": "docs", "context": 1},
			"docs/readme.md-2-two\ndocs/readme.md:3:three TODO\ndocs/readme.md-4-four\n--\ndocs/readme.md-6-six\ndocs/readme.md:7:seven TODO"},
		{"context merges", M{"pattern": "TODO", "path": "docs", "context": 2},
			"docs/readme.md-1-one\ndocs/readme.md-2-two\ndocs/readme.md:3:three TODO\ndocs/readme.md-4-four\ndocs/readme.md-5-five\ndocs/readme.md-6-six\ndocs/readme.md:7:seven TODO"},
		{"ignored dir on purpose", M{"pattern": "TODO", "path": "node_modules"}, "node_modules/x/y.js:1:TODO in deps"},
		{"ignored dir named by the glob", M{"pattern": "TODO", "glob": "node_modules/**"}, "node_modules/x/y.js:1:TODO in deps"},
		{"no match", M{"pattern": "FIXME"}, "no matches for FIXME\n(1 files larger than 65536 bytes were not searched)"},
		{"max results", M{"pattern": "TODO", "max_results": 1, "path": "docs"},
			"docs/readme.md:3:three TODO\n… stopped at max_results=1 matching lines; narrow the pattern, path or glob, or raise max_results"},
	}
	for _, tc := range tests {
		if got := e.ok("grep", tc.args); got != tc.want {
			t.Errorf("%s: grep %v =\n%s\nwant\n%s", tc.name, tc.args, got, tc.want)
		}
	}
	if got := e.ok("grep", M{"pattern": "TODO", "max_results": 2, "path": "docs"}); strings.Contains(got, "stopped") {
		t.Errorf("exactly max_results matches reported as truncated: %q", got)
	}
	e.fails("grep", M{"pattern": "a(b"}, "invalid regular expression", "literal=true")
	e.fails("grep", M{"pattern": ""}, "pattern is empty")
	e.fails("grep", M{"pattern": "x", "path": "srcc"}, "did you mean src?")
	e.fails("grep", M{"pattern": "x", "glob": "[x"}, "invalid glob")
}

// TestGrepFoldPrefilter: the case-insensitive prefilter never hides a
// match, including Unicode folds (the Kelvin sign folds to k).
func TestGrepFoldPrefilter(t *testing.T) {
	e := newEnv(t, tools.Options{})
	e.put("a.txt", "the KEY is here\n")
	e.put("b.txt", "the \u212aey is here\n")
	e.put("c.txt", "no match\n")
	got := e.ok("grep", M{"pattern": "key is", "ignore_case": true})
	if got != "a.txt:1:the KEY is here\nb.txt:1:the \u212aey is here" {
		t.Errorf("grep = %q", got)
	}
	if got := e.ok("grep", M{"pattern": `k\w+ is`, "ignore_case": true}); !strings.Contains(got, "b.txt:1") {
		t.Errorf("regex grep = %q", got)
	}
}

// TestGrepHugeOutput: many matches come back capped, long lines cut.
func TestGrepHugeOutput(t *testing.T) {
	e := newEnv(t, tools.Options{})
	for i := range 50 {
		e.put(fmt.Sprintf("f%02d.txt", i), strings.Repeat("match "+strings.Repeat("y", 500)+"\n", 100))
	}
	got := e.ok("grep", M{"pattern": "match"})
	lines := strings.Split(got, "\n")
	if len(lines) != 101 || !strings.HasPrefix(lines[100], "… stopped at max_results=100") {
		t.Errorf("grep: %d lines, last %q", len(lines), lines[len(lines)-1])
	}
	if len(lines[0]) > 400 || !strings.HasSuffix(lines[0], "…") {
		t.Errorf("long line not cut: %d bytes", len(lines[0]))
	}
}

// FuzzContainsFold compares the case-insensitive prefilter with lowering
// both sides: needle is lowered ASCII letters and punctuation.
func FuzzContainsFold(f *testing.F) {
	for _, c := range [][2]string{{"the KEY is here", "key is"}, {"", "a"}, {"aAaA", "aaa"}, {"xyz", "xyzw"}, {"caf\u00e9 KeY", "key"}, {"@[`{ZZ", "z"}} {
		f.Add(c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, data, needle string) {
		needle = strings.Map(func(r rune) rune {
			if r >= utf8.RuneSelf || r == 0 {
				return 'x'
			}
			return unicode.ToLower(r)
		}, needle)
		if needle == "" {
			return
		}
		lower := []byte(data)
		for i, c := range lower {
			if 'A' <= c && c <= 'Z' {
				lower[i] = c + 'a' - 'A'
			}
		}
		if got, want := tools.ContainsFold(data, needle), strings.Contains(string(lower), needle); got != want {
			t.Fatalf("ContainsFold(%q, %q) = %v, want %v", data, needle, got, want)
		}
	})
}
