package tools_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/forkspace/forkspace/provider"
	"github.com/forkspace/forkspace/tools"
)

// TestMergeTools runs a parent and a fork session through merge,
// conflicts, resolve and cherry_pick: each conflict names its path, kind
// and next step, and other tools' results say conflicts are pending.
func TestMergeTools(t *testing.T) {
	open := sessions(t)
	set := tools.New(tools.Options{})
	call, ok := callers(t, set)
	parent := open("parent")
	ok(parent, "write", `{"path":"a.txt","content":"1\n2\n3\n"}`)
	ok(parent, "write", `{"path":"b.txt","content":"b\n"}`)
	ok(parent, "fork", `{"name":"child"}`)
	child := open("child")
	ok(child, "write", `{"path":"a.txt","content":"1\n2\nchild\n"}`)
	ok(child, "write", `{"path":"b.txt","content":"b from child\n"}`)
	ok(child, "write", `{"path":"new.txt","content":"n\n"}`)
	ok(parent, "write", `{"path":"b.txt","content":"b from parent\n"}`)
	ok(parent, "write", `{"path":"a.txt","content":"one\n2\n3\n"}`)

	r := ok(parent, "merge", `{"from":"child","policy":"fail"}`)
	if !strings.Contains(r.Text, "nothing was merged") || !strings.Contains(r.Text, "b.txt (content)") {
		t.Fatalf("merge with policy fail: %s", r.Text)
	}
	r = ok(parent, "merge", `{"from":"child"}`)
	if !strings.Contains(r.Text, "merged child into this workspace") || !strings.Contains(r.Text, "- b.txt (content)") || !strings.Contains(r.Text, "Next: ") {
		t.Fatalf("merge: %s", r.Text)
	}
	var rep provider.MergeReport
	data, _ := json.Marshal(r.Structured)
	if err := json.Unmarshal(data, &rep); err != nil || len(rep.Conflicts) != 1 || rep.Checkpoint == "" {
		t.Fatalf("merge structured result: %s, %v", data, err)
	}
	if got := ok(parent, "read", `{"path":"a.txt"}`).Text; !strings.Contains(got, "one") || !strings.Contains(got, "child") || !strings.Contains(got, "unresolved merge conflicts") {
		t.Fatalf("read after the merge: %s", got)
	}
	if r := ok(parent, "conflicts", `{}`); !strings.Contains(r.Text, "1 unresolved") || !strings.Contains(r.Text, "b.txt") {
		t.Fatalf("conflicts: %s", r.Text)
	}
	if r := call(parent, "resolve", `{"path":"a.txt","take":"ours"}`); !r.IsError || !strings.Contains(r.Text, "no conflict at a.txt") {
		t.Fatalf("resolve of a path without conflict: %+v", r)
	}
	if r := call(parent, "resolve", `{"path":"b.txt","take":"mine"}`); !r.IsError || !strings.Contains(r.Text, "'ours', 'theirs', 'markers' or 'content'") {
		t.Fatalf("resolve with a bad take: %+v", r)
	}
	if r := ok(parent, "resolve", `{"path":"b.txt","take":"markers"}`); !strings.Contains(r.Text, "no conflict left") {
		t.Fatalf("resolve: %s", r.Text)
	}
	if got := ok(parent, "read", `{"path":"b.txt"}`).Text; !strings.Contains(got, "<<<<<<< parent") || strings.Contains(got, "unresolved merge conflicts") {
		t.Fatalf("b.txt after markers: %s", got)
	}

	// cherry_pick: from the parent back into the child, one path.
	ok(parent, "write", `{"path":"c.txt","content":"c\n"}`)
	r = ok(child, "cherry_pick", `{"from":"@parent","paths":["c.txt"]}`)
	if !strings.Contains(r.Text, "picked @parent into this workspace: 1 paths changed") {
		t.Fatalf("cherry_pick: %s", r.Text)
	}
	if r := call(child, "cherry_pick", `{"from":"@parent","paths":["nowhere"]}`); !r.IsError || !strings.Contains(r.Text, "nowhere exists neither") {
		t.Fatalf("cherry_pick of a missing path: %+v", r)
	}
	if r := call(child, "merge", `{"from":"stranger"}`); !r.IsError || !strings.Contains(r.Text, `no state "stranger"`) {
		t.Fatalf("merge of a missing workspace: %+v", r)
	}
}
