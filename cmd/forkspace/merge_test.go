package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/forkspace/forkspace"
)

// TestMergeCommands runs the merge workflow through the CLI: fork, change
// both sides, merge with --fail (nothing changes, exit 11), merge
// recording a conflict (exit 11, listed by conflicts and info), resolve
// it, cherry-pick and restore single paths.
func TestMergeCommands(t *testing.T) {
	c := newCLI(t)
	c.ok(nil, "workspace", "create", "p")
	c.ok([]byte("a\nb\nc\n"), "-w", "p", "put", "-", "/text")
	c.ok([]byte("same\n"), "-w", "p", "put", "-", "/other")
	c.ok(nil, "workspace", "fork", "p", "f")
	c.ok([]byte("a\nOURS\nc\n"), "-w", "p", "put", "-", "/text")
	c.ok([]byte("a\nTHEIRS\nc\n"), "-w", "f", "put", "-", "/text")
	c.ok([]byte("new\n"), "-w", "f", "put", "-", "/new")

	out, _, code := c.run(nil, "-w", "p", "merge", "f", "--fail", "--json")
	var r forkspace.MergeResult
	if err := json.Unmarshal([]byte(out), &r); err != nil || code != exitConflict {
		t.Fatalf("merge --fail: exit %d, %v\n%s", code, err, out)
	}
	if len(r.Conflicts) != 1 || r.Conflicts[0].Path != "text" || r.Conflicts[0].Kind != "content" || r.Conflicts[0].Next == "" {
		t.Fatalf("merge --fail conflicts: %+v", r.Conflicts)
	}
	c.fails(3, nil, "-w", "p", "cat", "/new") // nothing merged

	out, _, code = c.run(nil, "merge", "f", "--into", "p")
	if code != exitConflict || !strings.Contains(out, "text") || !strings.Contains(out, "forkspace resolve PATH") {
		t.Fatalf("merge: exit %d\n%s", code, out)
	}
	if got := c.ok(nil, "-w", "p", "cat", "/new"); got != "new\n" {
		t.Fatalf("merged new file reads %q", got)
	}
	var cs []forkspace.Conflict
	c.json(&cs, "-w", "p", "conflicts")
	if len(cs) != 1 || cs[0].Path != "text" || cs[0].Theirs.Hash == "" {
		t.Fatalf("conflicts: %+v", cs)
	}
	var info forkspace.Info
	c.json(&info, "workspace", "info", "p")
	if info.Conflicts != 1 {
		t.Fatalf("info: %d conflicts", info.Conflicts)
	}
	if out := c.ok(nil, "workspace", "info", "p"); !strings.Contains(out, "1 unresolved") {
		t.Fatalf("info does not mention the conflict:\n%s", out)
	}
	c.fails(exitUsage, nil, "-w", "p", "resolve", "text")
	c.fails(exitNotFound, nil, "-w", "p", "resolve", "other", "--ours")
	if out := c.ok([]byte("a\nboth\nc\n"), "-w", "p", "resolve", "text", "--content", "-"); !strings.Contains(out, "no conflict left") {
		t.Fatalf("resolve: %s", out)
	}
	if got := c.ok(nil, "-w", "p", "cat", "/text"); got != "a\nboth\nc\n" {
		t.Fatalf("resolved text reads %q", got)
	}

	// cherry-pick and restore of single paths
	c.ok([]byte("picked\n"), "-w", "f", "put", "-", "/other")
	c.ok(nil, "-w", "p", "checkpoint", "before-pick")
	c.ok(nil, "-w", "p", "cherry-pick", "f", "other")
	if got := c.ok(nil, "-w", "p", "cat", "/other"); got != "picked\n" {
		t.Fatalf("cherry-picked file reads %q", got)
	}
	c.fails(exitNotFound, nil, "-w", "p", "cherry-pick", "f", "nowhere")
	c.ok(nil, "-w", "p", "restore", "before-pick", "--path", "other")
	if got := c.ok(nil, "-w", "p", "cat", "/other"); got != "same\n" {
		t.Fatalf("restored file reads %q", got)
	}
	if got := c.ok(nil, "-w", "p", "cat", "/text"); got != "a\nboth\nc\n" {
		t.Fatalf("restore --path touched another file: %q", got)
	}
}
