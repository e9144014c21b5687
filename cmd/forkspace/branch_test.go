package main

import (
	"strings"
	"testing"

	"github.com/forkspace/forkspace"
)

// TestBestOfNCommands: fork --n, compare and promote through the CLI,
// with their refusals and exit codes.
func TestBestOfNCommands(t *testing.T) {
	c := newCLI(t)
	c.ok(nil, "workspace", "create", "job")
	c.ok([]byte("a\nb\nc\nd\ne\n"), "-w", "job", "put", "-", "/text")
	out := c.ok(nil, "fork", "job", "--n", "3")
	for _, name := range []string{"job-1", "job-2", "job-3"} {
		if !strings.Contains(out, "forked job as "+name) {
			t.Fatalf("fork --n 3:\n%s", out)
		}
	}
	var infos []forkspace.Info
	c.json(&infos, "fork", "job", "x", "y")
	if len(infos) != 2 || infos[0].Name != "x" || infos[0].Origin == "" {
		t.Fatalf("fork with names: %+v", infos)
	}
	c.fails(exitUsage, nil, "fork", "job")
	c.fails(exitUsage, nil, "fork", "job", "a", "--n", "2")
	c.fails(exitExists, nil, "fork", "job", "z", "job-1")
	c.fails(exitInvalid, nil, "fork", "job", "--n", "1000")
	c.fails(exitNotFound, nil, "fork", "nope", "--n", "2")

	c.ok([]byte("a\nONE\nc\nd\ne\n"), "-w", "job-1", "put", "-", "/text")
	c.ok([]byte("a\nb\nc\nd\nTWO\n"), "-w", "job-2", "put", "-", "/text")
	c.ok([]byte("new\n"), "-w", "job-2", "put", "-", "/new")
	out = c.ok(nil, "compare", "job", "job-1", "job-2", "-u")
	if !strings.Contains(out, "job-1 -> job-2: 2 changes") || !strings.Contains(out, "+TWO") {
		t.Fatalf("compare:\n%s", out)
	}
	var cmp forkspace.Comparison
	c.json(&cmp, "compare", "job", "job-1", "job-2")
	if cmp.Changes[0][1] != 1 || cmp.Changes[0][2] != 2 || cmp.Changes[2][1] != 2 {
		t.Fatalf("compare matrix %v", cmp.Changes)
	}
	c.fails(exitUsage, nil, "compare", "job")
	c.fails(exitNotFound, nil, "compare", "job", "nope")

	// The parent changed the line job-1 changed: a conflict, recorded
	// (exit 11) after the others are deleted.
	c.ok([]byte("a\nPARENT\nc\nd\ne\n"), "-w", "job", "put", "-", "/text")
	c.fails(exitConflict, nil, "promote", "job-1", "--fail")
	c.fails(exitUsage, nil, "promote", "job-2", "--head", "--ours")
	c.fails(exitInvalid, nil, "promote", "job")
	out, _, code := c.run(nil, "promote", "job-2")
	if code != exitOK || !strings.Contains(out, "promoted job-2 into job") || !strings.Contains(out, "deleted job-1, job-3") {
		t.Fatalf("promote: exit %d\n%s", code, out)
	}
	if got := c.ok(nil, "-w", "job", "cat", "/text"); got != "a\nPARENT\nc\nd\nTWO\n" {
		t.Fatalf("promoted text: %q", got)
	}
	var list []forkspace.Info
	c.json(&list, "workspace", "list")
	var names []string
	for _, in := range list {
		names = append(names, in.Name)
	}
	if strings.Join(names, " ") != "job job-2 x y" {
		t.Fatalf("workspaces after promote: %v", names)
	}
	var res forkspace.PromoteResult
	c.json(&res, "promote", "x", "--head")
	if !res.Head || res.Into != "job" || strings.Join(res.Deleted, " ") != "y" {
		t.Fatalf("promote --head: %+v", res)
	}
	if got := c.ok(nil, "-w", "job", "cat", "/text"); got != "a\nb\nc\nd\ne\n" {
		t.Fatalf("text after promote --head: %q", got)
	}
}
