package tools_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/forkspace/forkspace/provider"
	"github.com/forkspace/forkspace/tools"
)

// TestBestOfNTools: fork n, compare and promote as a session of the
// parent uses them, with the refusals a model meets.
func TestBestOfNTools(t *testing.T) {
	open := sessions(t)
	set := tools.New(tools.Options{})
	call, ok := callers(t, set)
	fails := func(ws provider.Workspace, name, args, want string) {
		t.Helper()
		if r := call(ws, name, args); !r.IsError || !strings.Contains(r.Text, want) {
			t.Errorf("%s %s: %+v, want an error with %q", name, args, r, want)
		}
	}
	main := open("main")
	ok(main, "write", `{"path":"calc.py","content":"def add(a, b):\n    pass\n"}`)
	r := ok(main, "fork", `{"n":3,"name":"try"}`)
	if !strings.Contains(r.Text, "forked the current state 3 ways: try-1, try-2, try-3") {
		t.Fatalf("fork n: %s", r.Text)
	}
	fails(main, "fork", `{"n":65}`, "n must be")
	fails(main, "fork", `{"n":2,"name":"bad/name"}`, "use letters, digits")
	fails(main, "fork", `{}`, "name is required (or n")

	one, two := open("try-1"), open("try-2")
	ok(one, "write", `{"path":"calc.py","content":"def add(a, b):\n    return a + b\n"}`)
	ok(two, "write", `{"path":"calc.py","content":"def add(a, b):\n    return b + a\n"}`)
	ok(two, "write", `{"path":"test_calc.py","content":"assert add(1, 2) == 3\n"}`)

	r = ok(main, "compare", `{"states":["main","try-1","try-2"]}`)
	if !strings.Contains(r.Text, "try-1 -> try-2: 2 changes") || !strings.Contains(r.Text, "+    return b + a") {
		t.Fatalf("compare: %s", r.Text)
	}
	var cmp provider.Comparison
	data, _ := json.Marshal(r.Structured)
	if err := json.Unmarshal(data, &cmp); err != nil || cmp.Changes[0][2] != 2 || len(cmp.Pairs) != 3 {
		t.Fatalf("compare structured: %s %v", data, err)
	}
	fails(main, "compare", `{"states":["main"]}`, "give 2 to 16 states")
	fails(main, "compare", `{"states":["main","main"]}`, "each state once")
	fails(main, "compare", `{"states":["main","stranger"]}`, "state stranger does not exist: name forks")
	stranger := open("stranger")
	fails(stranger, "compare", `{"states":["stranger","main"]}`, "state main shares no ancestor with this workspace: name forks")
	for _, ws := range []provider.Workspace{main, stranger} {
		if r := call(ws, "compare", `{"states":["main","stranger"]}`); strings.Contains(r.Text, "ws-") || strings.Contains(r.Text, "get workspace") {
			t.Errorf("compare names the store's internals: %q", r.Text)
		}
	}

	fails(main, "promote", `{"winner":"nope"}`, `no workspace "nope"`)
	fails(main, "promote", `{"winner":"stranger"}`, "stranger is not a fork of this workspace")
	fails(one, "promote", `{"winner":"try-2"}`, "try-2 is not a fork of this workspace")
	fails(main, "promote", `{"winner":"try-2","head":true,"policy":"ours"}`, "policy is for merging")
	r = ok(main, "promote", `{"winner":"try-2"}`)
	if !strings.Contains(r.Text, "merged try-2 into this workspace: 2 paths changed") || !strings.Contains(r.Text, "deleted the other forks: try-1, try-3") {
		t.Fatalf("promote: %s", r.Text)
	}
	if got := ok(main, "read", `{"path":"test_calc.py"}`).Text; !strings.Contains(got, "assert add") {
		t.Fatalf("promoted file: %s", got)
	}
}
