package tools_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/forkspace/forkspace/tools"
)

func numbered(n int) string {
	var b strings.Builder
	for i := 1; i <= n; i++ {
		fmt.Fprintf(&b, "line %d\n", i)
	}
	return b.String()
}

func TestRead(t *testing.T) {
	e := newEnv(t, tools.Options{MaxReadBytes: 4096})
	e.put("src/a.go", "package a\n\nfunc A() {}\n")
	e.put("big.txt", numbered(5000))
	e.put("long.txt", strings.Repeat("x", 5000)+"\nend\n")
	e.put("bin.dat", "\x00\x01\x02binary")
	e.put("empty.txt", "")

	if got := e.ok("read", M{"path": "src/a.go"}); got != "     1\tpackage a\n     2\t\n     3\tfunc A() {}" {
		t.Errorf("read a.go = %q", got)
	}
	if got := e.ok("read", M{"path": "/src/a.go", "offset": 3, "limit": 1}); got != "     3\tfunc A() {}" {
		t.Errorf("read with offset = %q", got)
	}
	// Paged by lines.
	got := e.ok("read", M{"path": "big.txt", "offset": 10, "limit": 5})
	if !strings.HasPrefix(got, "    10\tline 10\n") || !strings.HasSuffix(got, "… 4986 more lines; call read with offset=15") {
		t.Errorf("paged read = %q", got)
	}
	// Capped in bytes, with a continuation hint.
	got = e.ok("read", M{"path": "big.txt"})
	if len(got) > 4096+100 || !strings.Contains(got, "more lines; call read with offset=") {
		t.Errorf("byte cap: %d bytes, ends %q", len(got), got[len(got)-80:])
	}
	got = e.ok("read", M{"path": "long.txt"})
	if !strings.Contains(got, "[line cut: 3000 more bytes]") || !strings.Contains(got, "     2\tend") {
		t.Errorf("long line: %q", got[len(got)-100:])
	}
	if got := e.ok("read", M{"path": "bin.dat"}); !strings.Contains(got, "binary file (9 bytes)") || strings.Contains(got, "\x00") {
		t.Errorf("binary read = %q", got)
	}
	if got := e.ok("read", M{"path": "empty.txt"}); got != "empty.txt is empty" {
		t.Errorf("empty read = %q", got)
	}
	e.fails("read", M{"path": "src/b.go"}, "no such file or directory: src/b.go", "did you mean src/a.go?")
	e.fails("read", M{"path": "scr/a.go"}, "did you mean src?")
	e.fails("read", M{"path": "src"}, "src is a directory; use ls")
	e.fails("read", M{"path": "big.txt", "offset": 6000}, "past the end", "5000 lines")
	e.fails("read", M{"path": "big.txt", "limit": -1}, "limit must be between 0 and")
	defer tools.SetMaxReadFile(1000)()
	e.fails("read", M{"path": "big.txt"}, "too large to read", "use grep")
}

func TestPathEscapes(t *testing.T) {
	e := newEnv(t, tools.Options{})
	e.put("a.txt", "a")
	for _, c := range []struct {
		tool string
		args M
	}{
		{"read", M{"path": "../etc/passwd"}},
		{"read", M{"path": "/../../etc/passwd"}},
		{"read", M{"path": "src/../../x"}},
		{"write", M{"path": "../x", "content": "x"}},
		{"edit", M{"path": "../a.txt", "edits": []M{{"old_text": "a", "new_text": "b"}}}},
		{"ls", M{"path": ".."}},
		{"stat", M{"path": "../.."}},
		{"rm", M{"path": "../a.txt"}},
		{"mkdir", M{"path": "../d"}},
		{"mv", M{"from": "a.txt", "to": "../a.txt"}},
		{"grep", M{"pattern": "a", "path": "../"}},
	} {
		e.fails(c.tool, c.args, "escapes the workspace")
	}
	// "/" is the workspace root, and .. inside it is fine.
	if got := e.ok("read", M{"path": "/x/../a.txt"}); got != "     1\ta" {
		t.Errorf("read /x/../a.txt = %q", got)
	}
	if got := e.ok("ls", M{"path": "/"}); got != "a.txt (1 bytes)" {
		t.Errorf("ls / = %q", got)
	}
}

func TestWrite(t *testing.T) {
	e := newEnv(t, tools.Options{})
	if got := e.ok("write", M{"path": "a/b/c.txt", "content": "one\ntwo\n"}); got != "created a/b/c.txt (8 bytes, 2 lines)" {
		t.Errorf("write = %q", got)
	}
	if got := e.ok("write", M{"path": "/a/b/c.txt", "content": "three"}); got != "replaced a/b/c.txt (5 bytes, 1 lines)" {
		t.Errorf("rewrite = %q", got)
	}
	if e.get("a/b/c.txt") != "three" {
		t.Error("content not replaced")
	}
	e.fails("write", M{"path": "a", "content": "x"}, "a is a directory")
	e.fails("write", M{"path": "/", "content": "x"}, "not the workspace root")
	e.fails("write", M{"path": "a/b/c.txt/d", "content": "x"}, "not a directory")
	e.fails("write", M{"path": "x", "content": "x", "mode": 7}, "invalid arguments", "unknown field")
	e.fails("write", M{"path": 3}, "invalid arguments")
}

func TestEdit(t *testing.T) {
	e := newEnv(t, tools.Options{})
	e.put("main.go", "package main\n\nfunc main() {\n\tprintln(\"hi\")\n\tprintln(\"hi\")\n}\n")
	got := e.ok("edit", M{"path": "main.go", "edits": []M{
		{"old_text": "package main", "new_text": "package app"},
		{"old_text": "func main()", "new_text": "func Run()"},
	}})
	if !strings.Contains(got, "edited main.go (2 edits)") || !strings.Contains(got, "-package main\n+package app") ||
		!strings.Contains(got, "--- a/main.go") {
		t.Errorf("edit output = %q", got)
	}
	want := "package app\n\nfunc Run() {\n\tprintln(\"hi\")\n\tprintln(\"hi\")\n}\n"
	if e.get("main.go") != want {
		t.Fatalf("after edit: %q", e.get("main.go"))
	}
	// Atomicity: the second edit fails, so the first is not applied either.
	e.fails("edit", M{"path": "main.go", "edits": []M{
		{"old_text": "package app", "new_text": "package x"},
		{"old_text": "println(\"hi\")", "new_text": "println(\"bye\")"},
	}}, "edit 2", "occurs 2 times", "no edit was applied")
	e.fails("edit", M{"path": "main.go", "edits": []M{{"old_text": "PACKAGE APP", "new_text": "x"}}}, "not found", "different letter case")
	e.fails("edit", M{"path": "main.go", "edits": []M{{"old_text": "func   Run()  {", "new_text": "x"}}}, "different whitespace")
	e.fails("edit", M{"path": "main.go", "edits": []M{{"old_text": "", "new_text": "x"}}}, "old_text is empty")
	e.fails("edit", M{"path": "main.go", "edits": []M{}}, "no edits")
	e.fails("edit", M{"path": "main.go", "edits": []M{{"old_text": "app", "new_text": "app"}}}, "unchanged")
	e.fails("edit", M{"path": "mian.go", "edits": []M{{"old_text": "a", "new_text": "b"}}}, "did you mean main.go?")
	if e.get("main.go") != want {
		t.Errorf("failed edits changed the file: %q", e.get("main.go"))
	}
	e.put("img.png", "\x89PNG\x00\x00")
	e.fails("edit", M{"path": "img.png", "edits": []M{{"old_text": "PNG", "new_text": "x"}}}, "binary")
	// Sequential semantics: a later edit sees the earlier ones.
	e.ok("edit", M{"path": "main.go", "edits": []M{
		{"old_text": "func Run()", "new_text": "func Start()"},
		{"old_text": "func Start() {\n\tprintln(\"hi\")", "new_text": "func Start() {\n\tprintln(\"first\")"},
	}})
	if !strings.Contains(e.get("main.go"), "println(\"first\")\n\tprintln(\"hi\")") {
		t.Errorf("sequential edits: %q", e.get("main.go"))
	}
}

func TestLs(t *testing.T) {
	e := newEnv(t, tools.Options{})
	for i := range 250 {
		e.put(fmt.Sprintf("many/f%03d", i), "xy")
	}
	e.put("top.txt", "hello")
	e.ok("mkdir", M{"path": "sub"})
	if got := e.ok("ls", M{}); got != "many/\nsub/\ntop.txt (5 bytes)" {
		t.Errorf("ls root = %q", got)
	}
	got := e.ok("ls", M{"path": "many"})
	if lines := strings.Split(got, "\n"); len(lines) != 201 || lines[0] != "f000 (2 bytes)" ||
		lines[200] != "… 50 more entries; call ls with offset=200" {
		t.Errorf("ls many: %d lines, last %q", len(lines), lines[len(lines)-1])
	}
	got = e.ok("ls", M{"path": "many", "offset": 200})
	if lines := strings.Split(got, "\n"); len(lines) != 50 || lines[49] != "f249 (2 bytes)" {
		t.Errorf("ls page 2: %d lines", len(lines))
	}
	if got := e.ok("ls", M{"path": "sub"}); got != "sub is empty" {
		t.Errorf("ls empty = %q", got)
	}
	e.fails("ls", M{"path": "top.txt"}, "is a file (5 bytes)")
	e.fails("ls", M{"path": "mny"}, "did you mean many?")
	e.fails("ls", M{"path": "many", "offset": 300}, "past the end")
}

func TestStatRmMkdirMv(t *testing.T) {
	e := newEnv(t, tools.Options{})
	e.put("d/a.txt", "abc")
	got := e.ok("stat", M{"path": "d/a.txt"})
	if !strings.Contains(got, "type: file\nsize: 3\nmode: -rw-r--r--") {
		t.Errorf("stat = %q", got)
	}
	if got := e.ok("stat", M{"path": "/"}); !strings.Contains(got, "path: /\ntype: directory") {
		t.Errorf("stat / = %q", got)
	}
	e.fails("mkdir", M{"path": "x/y/z"}, "pass parents=true")
	e.ok("mkdir", M{"path": "x/y/z", "parents": true})
	e.ok("mkdir", M{"path": "x/y/z", "parents": true})
	e.fails("mkdir", M{"path": "x/y/z"}, "already exists")
	e.fails("rm", M{"path": "d"}, "d is a directory with 1 entries; pass recursive=true")
	e.fails("rm", M{"path": "/"}, "refusing to remove the workspace root")
	e.fails("rm", M{"path": "d/b.txt"}, "did you mean d/a.txt?")
	e.ok("rm", M{"path": "x/y/z"}) // an empty directory needs no recursive
	e.ok("mv", M{"from": "d/a.txt", "to": "x/a.txt"})
	if e.get("x/a.txt") != "abc" {
		t.Error("mv lost content")
	}
	e.fails("mv", M{"from": "d/a.txt", "to": "x/b.txt"}, "no such file or directory: d/a.txt")
	e.fails("mv", M{"from": "x/a.txt", "to": "nope/b.txt"}, "cannot move x/a.txt to nope/b.txt: no such file or directory: nope")
	e.ok("rm", M{"path": "x", "recursive": true})
	e.fails("stat", M{"path": "x"}, "no such file")
}
