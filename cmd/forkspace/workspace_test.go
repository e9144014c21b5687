package main

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/forkspace/forkspace"
)

func TestWorkspaceCommands(t *testing.T) {
	c := newCLI(t)
	var store map[string]string
	c.json(&store, "init")
	if !filepath.IsAbs(store["store"]) {
		t.Errorf("init --json: %v", store)
	}
	if out := c.ok(nil, "workspace"); !strings.Contains(out, "Available Commands") {
		t.Errorf("workspace without a subcommand:\n%s", out)
	}
	var info forkspace.Info
	c.json(&info, "workspace", "create", "alpha", "--quota-entries", "1000")
	if info.Name != "alpha" || !strings.HasPrefix(info.ID, "ws-") || info.Quota.MaxEntries != 1000 {
		t.Errorf("create: %+v", info)
	}
	c.ok([]byte("v1\n"), "-w", "alpha", "put", "-", "a.txt")
	var cp forkspace.Checkpoint
	c.json(&cp, "-w", "alpha", "checkpoint", "first")
	if cp.Label != "first" || !strings.HasPrefix(cp.ID, "cp-") {
		t.Errorf("checkpoint: %+v", cp)
	}
	c.json(&info, "workspace", "fork", "alpha@first", "beta")
	if info.Name != "beta" || info.Origin != cp.ID {
		t.Errorf("fork: %+v", info)
	}
	c.ok(nil, "workspace", "fork", "alpha", "gamma")
	var list []forkspace.Info
	c.json(&list, "workspace", "list")
	if len(list) != 3 || list[0].Name != "alpha" || list[1].ParentID != list[0].ID {
		t.Errorf("list: %+v", list)
	}
	if out := c.ok(nil, "workspace", "ls"); !strings.Contains(out, "NAME") || !strings.Contains(out, "gamma") {
		t.Errorf("human list:\n%s", out)
	}
	c.json(&info, "workspace", "info", "alpha")
	if info.Entries != 1 || info.Bytes != 3 || info.Checkpoints != 1 {
		t.Errorf("info: %+v", info)
	}
	if out := c.ok(nil, "workspace", "info", "beta"); !strings.Contains(out, "forked at:") {
		t.Errorf("human info:\n%s", out)
	}
	c.ok(nil, "workspace", "delete", "gamma")
	c.json(&list, "workspace", "list")
	if len(list) != 2 {
		t.Errorf("after delete: %d workspaces", len(list))
	}
}

func TestCheckpointRestoreDiff(t *testing.T) {
	c := newCLI(t)
	c.ok(nil, "workspace", "create", "w")
	c.ok([]byte("one\ntwo\n"), "-w", "w", "put", "-", "f.txt")
	id := strings.TrimSpace(c.ok(nil, "-w", "w", "checkpoint", "v1"))
	if !strings.HasPrefix(id, "cp-") {
		t.Fatalf("checkpoint printed %q", id)
	}
	c.ok([]byte("one\nTWO\n"), "-w", "w", "put", "-", "f.txt")
	c.ok([]byte("new\n"), "-w", "w", "put", "-", "g.txt")

	var cps []forkspace.Checkpoint
	c.json(&cps, "-w", "w", "checkpoints")
	if len(cps) != 1 || cps[0].ID != id {
		t.Errorf("checkpoints: %+v", cps)
	}
	if out := c.ok(nil, "-w", "w", "checkpoints"); !strings.Contains(out, "v1") {
		t.Errorf("checkpoints:\n%s", out)
	}
	// A checkpoint view reads the old state.
	if got := c.ok(nil, "-w", "w@v1", "cat", "f.txt"); got != "one\ntwo\n" {
		t.Errorf("cat at checkpoint: %q", got)
	}

	var changes []struct {
		Op, Path, Unified string
	}
	c.json(&changes, "diff", "w@v1")
	if len(changes) != 2 || changes[0].Op != "modified" || changes[1].Op != "added" || changes[1].Path != "g.txt" {
		t.Errorf("diff w@v1: %+v", changes)
	}
	out := c.ok(nil, "diff", "w@v1", "w", "--unified")
	if !strings.Contains(out, "M f.txt") || !strings.Contains(out, "-two") || !strings.Contains(out, "+TWO") || !strings.Contains(out, "A g.txt") {
		t.Errorf("diff --unified:\n%s", out)
	}

	c.ok(nil, "workspace", "fork", "w", "f")
	c.ok(nil, "-w", "f", "rm", "g.txt")
	c.json(&changes, "diff", "f")
	if len(changes) != 1 || changes[0].Op != "deleted" || changes[0].Path != "g.txt" {
		t.Errorf("diff fork vs parent: %+v", changes)
	}
	c.json(&changes, "diff", "w", "w")
	if len(changes) != 0 {
		t.Errorf("diff of a state with itself: %+v", changes)
	}
	c.fails(exitNotFound, nil, "diff", "w")

	var restored map[string]string
	c.json(&restored, "-w", "w", "restore", "v1")
	if restored["workspace"] != "w" || restored["checkpoint"] != "v1" {
		t.Errorf("restore --json: %v", restored)
	}
	if got := c.ok(nil, "-w", "w", "cat", "f.txt"); got != "one\ntwo\n" {
		t.Errorf("after restore: %q", got)
	}
	c.fails(exitNotFound, nil, "-w", "w", "cat", "g.txt")
	c.fails(exitNotFound, nil, "-w", "w", "restore", "nope")
}
