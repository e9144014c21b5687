package main

import (
	"context"
	"strings"
	"testing"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/audit"
)

func TestLogCommand(t *testing.T) {
	c := newCLI(t)
	c.ok(nil, "workspace", "create", "a")
	c.ok(nil, "workspace", "create", "b")
	// Record calls through audited library handles, as tools and exec do.
	ctx := context.Background()
	st, err := forkspace.Open(ctx, forkspace.Options{Dir: c.store})
	if err != nil {
		t.Fatal(err)
	}
	for _, ws := range []string{"a", "b", "a"} {
		h, err := st.Audited(ctx, ws, forkspace.AuditOptions{Actor: audit.Actor{Name: "agent", Session: "s-" + ws}})
		if err != nil {
			t.Fatal(err)
		}
		if err := h.WriteFile(ctx, "f.txt", []byte("secret contents"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	h, _ := st.Audited(ctx, "a", forkspace.AuditOptions{})
	h.Remove(ctx, "missing")
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	var all []audit.Entry
	c.json(&all, "log", "--json")
	// Newest first: the library calls, then the CLI's own two creates.
	if len(all) != 6 || all[0].Tool != "library.Remove" || all[0].Error == "" || all[3].Tool != "library.WriteFile" ||
		all[5].Tool != "cli.create" || all[5].Actor != "cli" {
		t.Fatalf("log --json = %+v", all)
	}
	var a []audit.Entry
	c.json(&a, "log", "-w", "a", "--json")
	if len(a) != 3 {
		t.Errorf("log -w a: %d entries, want 3", len(a))
	}
	var s []audit.Entry
	c.json(&s, "log", "--session", "s-b", "--limit", "5", "--json")
	if len(s) != 1 || s[0].Session != "s-b" {
		t.Errorf("log --session s-b = %+v", s)
	}
	var page []audit.Entry
	c.json(&page, "log", "--limit", "1", "--before", "0", "--json")
	if len(page) != 1 || page[0].Seq != all[0].Seq {
		t.Errorf("log --limit 1 = %+v", page)
	}
	out := c.ok(nil, "log", "-w", "a")
	if !strings.Contains(out, "library.WriteFile") || !strings.Contains(out, "error: remove missing") ||
		!strings.Contains(out, "agent") || strings.Contains(out, "secret contents") {
		t.Errorf("log table:\n%s", out)
	}
	c.fails(exitNotFound, nil, "log", "-w", "nope")
}
