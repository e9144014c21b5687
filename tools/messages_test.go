package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"strings"
	"syscall"
	"testing"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/audit"
	"github.com/forkspace/forkspace/tools"
)

// TestMissingPathSuggestsNearMiss: a path without its extension, or with
// another case, is suggested as a new user would hope.
func TestMissingPathSuggestsNearMiss(t *testing.T) {
	e := newEnv(t, tools.Options{})
	e.put("calc.py", "print(1)\n")
	e.put("src/Main.go", "package main\n")
	e.fails("read", M{"path": "calc"}, "no such file or directory: calc", "did you mean calc.py?")
	e.fails("stat", M{"path": "src/main"}, "did you mean src/Main.go?")
	e.fails("rm", M{"path": "calc.py.bak"}, "did you mean calc.py?")
}

// TestDanglingLinkNamesTarget: a dangling symbolic link is reported as
// one, with its target, not as missing with itself as the suggestion.
func TestDanglingLinkNamesTarget(t *testing.T) {
	e := newEnv(t, tools.Options{})
	w := e.ws.(interface{ Store() *forkspace.Workspace }).Store()
	if err := w.Symlink(context.Background(), "gone/target.txt", "lnk"); err != nil {
		t.Fatal(err)
	}
	msg := e.fails("read", M{"path": "lnk"}, "lnk is a dangling symbolic link", "gone/target.txt does not exist")
	if strings.Contains(msg, "did you mean") {
		t.Errorf("dangling link suggests: %q", msg)
	}
}

// TestMvIntoMissingDirectory names the missing directory, not the
// destination file.
func TestMvIntoMissingDirectory(t *testing.T) {
	e := newEnv(t, tools.Options{})
	e.put("a.txt", "a")
	e.put("docs/x", "x")
	msg := e.fails("mv", M{"from": "a.txt", "to": "doc/a.txt"}, "cannot move a.txt to doc/a.txt", "no such file or directory: doc;", "did you mean docs?")
	if strings.Contains(msg, "no such file or directory: doc/a.txt") {
		t.Errorf("mv names the destination as missing: %q", msg)
	}
	if e.get("a.txt") != "a" {
		t.Error("failed mv changed the source")
	}
}

// TestLongPathShownOnceAndCut: a 12,000-byte path yields a short message
// naming a prefix of it once.
func TestLongPathShownOnceAndCut(t *testing.T) {
	e := newEnv(t, tools.Options{})
	long := strings.Repeat("abcdefghij/", 1100)
	for _, c := range []struct {
		tool string
		args M
	}{
		{"read", M{"path": long}},
		{"read", M{"path": strings.Repeat("x", 12000)}},
		{"write", M{"path": long, "content": "x"}},
		{"mv", M{"from": long, "to": "y"}},
		{"read", M{"path": "../" + long}},
	} {
		msg := e.fails(c.tool, c.args, "…")
		if len(msg) > 1000 {
			t.Errorf("%s: %d-byte message: %.300q", c.tool, len(msg), msg)
		}
	}
}

// failingRecorder is an audit store whose disk is full.
type failingRecorder struct{}

func (failingRecorder) Record(context.Context, audit.Entry) error {
	return fmt.Errorf("record audit entry write: %w",
		&fs.PathError{Op: "write", Path: "/var/lib/forkspace/meta.db-wal", Err: syscall.ENOSPC})
}

// TestUnrecordedCallMessage: a call whose audit entry cannot be written
// says so without the recorder's internals or host paths.
func TestUnrecordedCallMessage(t *testing.T) {
	e := newEnv(t, tools.Options{Recorder: failingRecorder{}})
	msg := e.fails("write", M{"path": "a.txt", "content": "a"}, "could not be recorded in the audit log")
	msg += e.fails("rm", M{"path": "missing.txt"}, "no such file or directory: missing.txt", "(the call was not recorded in the audit log)")
	for _, bad := range []string{"/var/lib", "record audit entry", "meta.db"} {
		if strings.Contains(msg, bad) {
			t.Errorf("message leaks %q: %q", bad, msg)
		}
	}
}

// TestSchemasUsePlainTypes: no input or output schema of any tool has a
// union type (a "type" array such as ["null","array"]), which clients
// such as the MCP Inspector reject.
func TestSchemasUsePlainTypes(t *testing.T) {
	var walk func(where string, v any)
	walk = func(where string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, x := range v {
				if _, isList := x.([]any); k == "type" && isList {
					t.Errorf("%s: union type %v", where, x)
				}
				walk(where+"."+k, x)
			}
		case []any:
			for _, x := range v {
				walk(where, x)
			}
		}
	}
	for _, tl := range tools.New(tools.Options{}).Tools() {
		for kind, s := range map[string]any{"input": tl.InputSchema, "output": tl.OutputSchema} {
			data, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			var v any
			if err := json.Unmarshal(data, &v); err != nil {
				t.Fatal(err)
			}
			walk(tl.Name+" "+kind, v)
		}
	}
}
