package main

import (
	"strings"
	"testing"

	"github.com/forkspace/forkspace"
)

func TestDemo(t *testing.T) {
	c := newCLI(t)
	out := c.ok(nil, "demo")
	for _, want := range []string{"created workspace demo-", "checkpoint cp-", "M src/main.go", "+\tfmt.Println(\"bonjour\")", "restored"} {
		if !strings.Contains(out, want) {
			t.Errorf("demo output lacks %q:\n%s", want, out)
		}
	}
	var list []forkspace.Info
	c.json(&list, "workspace", "list")
	if len(list) != 2 {
		t.Errorf("demo left %d workspaces, want 2", len(list))
	}
	c.ok(nil, "demo") // unique names: runs again on the same store
}
