package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/audit"
)

// TestHistoryCommand runs the README's CLI flow, checks that every
// mutation in it is in the audit log, then steps back through the
// history: cat, diff and restore as of earlier steps.
func TestHistoryCommand(t *testing.T) {
	c := newCLI(t)
	src := filepath.Join(c.cwd, "my-project")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "NOTES.md"), []byte("notes\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c.ok(nil, "workspace", "create", "agent-1")
	c.ok(nil, "-w", "agent-1", "import", "./my-project", "--to", "/src")
	c.ok(nil, "-w", "agent-1", "checkpoint", "before-refactor")
	c.ok(nil, "workspace", "fork", "agent-1", "agent-1-try")
	c.ok([]byte("new notes\n"), "-w", "agent-1-try", "put", "-", "/src/NOTES.md")
	c.ok(nil, "diff", "agent-1-try", "--unified")
	c.ok(nil, "-w", "agent-1@before-refactor", "export", "snapshot.tar.gz")

	var log []audit.Entry
	c.json(&log, "log")
	var tools []string
	for _, e := range log {
		tools = append(tools, e.Tool)
	}
	for _, want := range []string{"cli.create", "cli.import", "cli.checkpoint", "cli.fork", "cli.write"} {
		if !slices.Contains(tools, want) {
			t.Errorf("log lacks %s: %v", want, tools)
		}
	}

	c.ok([]byte("newer notes\n"), "-w", "agent-1-try", "put", "-", "/src/NOTES.md")
	var steps []forkspace.Step
	c.json(&steps, "history", "agent-1-try")
	if len(steps) != 2 || steps[0].Back != "agent-1-try@~0" || steps[1].Changed[0] != "src/NOTES.md" {
		t.Fatalf("history --json = %+v", steps)
	}
	if got := c.ok(nil, "-w", "agent-1-try@~1", "cat", "/src/NOTES.md"); got != "new notes\n" {
		t.Errorf("cat at ~1 = %q", got)
	}
	if got := c.ok(nil, "-w", steps[1].State, "cat", "/src/NOTES.md"); got != "new notes\n" {
		t.Errorf("cat at %s = %q", steps[1].State, got)
	}
	if out := c.ok(nil, "diff", "agent-1-try@~1", "agent-1-try", "--unified"); !strings.Contains(out, "+newer notes") {
		t.Errorf("diff ~1 to head:\n%s", out)
	}
	out := c.ok(nil, "history", "-w", "agent-1-try")
	if !strings.Contains(out, "agent-1-try@~1") || !strings.Contains(out, "cli.write") {
		t.Errorf("history table:\n%s", out)
	}
	c.ok(nil, "-w", "agent-1-try", "restore", "~1")
	if got := c.ok(nil, "-w", "agent-1-try", "cat", "/src/NOTES.md"); got != "new notes\n" {
		t.Errorf("after restore ~1: %q", got)
	}
	c.fails(exitNotFound, nil, "-w", "agent-1-try@~50", "cat", "/src/NOTES.md")
	c.fails(exitInvalid, nil, "-w", "agent-1-try@~x", "cat", "/src/NOTES.md")
	c.fails(exitInvalid, nil, "-w", "agent-1@audit:"+strings.TrimPrefix(steps[0].State, "agent-1-try@audit:"), "cat", "/src/NOTES.md")
	c.fails(exitNotFound, nil, "history", "nope")
}
