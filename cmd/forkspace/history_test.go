package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/audit"
	"github.com/forkspace/forkspace/fusefs/fusetest"
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

// TestFUSEWritesAreSteps: files written through the FUSE mount of `serve
// --fuse` are steps of the workspace's history, like calls through the
// other doors: the entries the server notes for them record states, and
// after an overwrite the earlier step still reads the earlier bytes.
func TestFUSEWritesAreSteps(t *testing.T) {
	fusetest.Require(t)
	c := newCLI(t)
	c.ok(nil, "workspace", "create", "w")
	mnt := t.TempDir()
	_, stop := serve(t, c.store, "--fuse", mnt)
	defer stop()
	var states []string
	for _, text := range []string{"one", "two"} {
		if err := os.WriteFile(filepath.Join(mnt, "w", "notes.txt"), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		states = append(states, fuseStep(t, c, text))
	}
	if got := c.ok(nil, "-w", states[0], "cat", "notes.txt"); got != "one" {
		t.Errorf("cat at %s = %q, want the first write", states[0], got)
	}
	c.ok(nil, "-w", "w", "restore", strings.TrimPrefix(states[0], "w@"))
	if got := c.ok(nil, "-w", "w", "cat", "notes.txt"); got != "one" {
		t.Errorf("after restore %s: %q", states[0], got)
	}
}

// fuseStep waits for the newest step of w to be a FUSE step whose state
// has notes.txt holding text (FUSE changes are noted after the fact, in
// batches) and returns that state.
func fuseStep(t *testing.T, c *cli, text string) string {
	t.Helper()
	for range 600 { // a hang guard, not a timing assertion
		var steps []forkspace.Step
		c.json(&steps, "history", "w", "--limit", "1")
		if len(steps) == 1 && strings.HasPrefix(steps[0].Tool, "fuse.") && steps[0].State != "" {
			if got, _, code := c.run(nil, "-w", steps[0].State, "cat", "notes.txt"); code == 0 && got == text {
				return steps[0].State
			}
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Fatalf("no FUSE step of w has notes.txt = %q", text)
	return ""
}
