package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/forkspace/forkspace/audit"
	"github.com/forkspace/forkspace/provider"
	"github.com/forkspace/forkspace/tools"
)

func TestSnapshots(t *testing.T) {
	e := newEnv(t, tools.Options{})
	e.fails("diff", M{}, "no checkpoints to compare with")
	if got := e.ok("checkpoints", M{}); !strings.Contains(got, "no checkpoints yet") {
		t.Errorf("checkpoints = %q", got)
	}
	e.put("main.go", "package main\n")
	if got := e.ok("checkpoint", M{"label": "green"}); !strings.Contains(got, `created (label "green")`) {
		t.Errorf("checkpoint = %q", got)
	}
	e.ok("write", M{"path": "main.go", "content": "package broken\n"})
	e.ok("write", M{"path": "new.txt", "content": "x"})
	got := e.ok("diff", M{})
	if !strings.Contains(got, "2 changes from") || !strings.Contains(got, "modified main.go") || !strings.Contains(got, "added new.txt") ||
		!strings.Contains(got, "-package main\n+package broken") {
		t.Errorf("diff = %q", got)
	}
	if got := e.ok("diff", M{"from": "green", "summary": true}); strings.Contains(got, "+package") {
		t.Errorf("summary diff has text: %q", got)
	}
	e.ok("fork", M{"name": "attempt-2"})
	e.fails("fork", M{"name": "attempt-2"}, "already exists")
	e.fails("fork", M{"name": "bad name!"}, "fork failed")
	e.fails("restore", M{"checkpoint": "gren"}, `no checkpoint "gren"`, "recent checkpoints", "green")
	e.ok("restore", M{"checkpoint": "green"})
	if e.get("main.go") != "package main\n" {
		t.Errorf("after restore: %q", e.get("main.go"))
	}
	e.fails("stat", M{"path": "new.txt"}, "no such file")
	if got := e.ok("checkpoints", M{}); !strings.Contains(got, `(label "green")`) {
		t.Errorf("checkpoints = %q", got)
	}
	for i := range 60 {
		e.ok("checkpoint", M{"label": fmt.Sprint("n", i)})
	}
	got = e.ok("checkpoints", M{})
	if lines := strings.Split(got, "\n"); len(lines) != 51 || lines[0] != "… 11 older checkpoints not shown" || !strings.HasSuffix(lines[50], `(label "n59")`) {
		t.Errorf("checkpoints: %d lines, first %q, last %q", len(lines), lines[0], lines[len(lines)-1])
	}
}

// recorder collects audit entries.
type recorder struct {
	mu sync.Mutex
	es []audit.Entry
}

func (r *recorder) Record(_ context.Context, e audit.Entry) error {
	r.mu.Lock()
	r.es = append(r.es, e)
	r.mu.Unlock()
	return nil
}

func TestAuditAndAutoCheckpoint(t *testing.T) {
	rec := &recorder{}
	e := newEnv(t, tools.Options{AutoCheckpoint: true, Recorder: rec})
	ctx := audit.WithActor(context.Background(), audit.Actor{Name: "agent", Session: "s1"})
	res := e.set.Call(ctx, tools.Direct(e.ws), "write", []byte(`{"path":"a.txt","content":"v1"}`))
	if res.IsError || !strings.Contains(res.Text, "was taken before this call; restore it to undo") {
		t.Fatalf("write = %+v", res)
	}
	e.ok("write", M{"path": "a.txt", "content": "v2"})
	e.fails("rm", M{"path": "missing"}, "no such file")
	e.ok("read", M{"path": "a.txt"})
	e.ok("checkpoint", M{"label": "manual"})
	if len(rec.es) != 4 {
		t.Fatalf("recorded %d entries, want 4 (write, write, rm, checkpoint): %+v", len(rec.es), rec.es)
	}
	first := rec.es[0]
	if first.Tool != "write" || first.Actor != "agent" || first.Session != "s1" || first.ArgsDigest == "" ||
		first.Checkpoint == "" || len(first.Changed) != 1 || first.Changed[0] != "a.txt" || first.WorkspaceID != e.ws.ID() {
		t.Errorf("first entry = %+v", first)
	}
	if rec.es[2].Error == "" || rec.es[3].Checkpoint != "" {
		t.Errorf("rm entry %+v, checkpoint entry %+v", rec.es[2], rec.es[3])
	}
	// Rewinding the second write through its automatic checkpoint.
	e.ok("restore", M{"checkpoint": rec.es[1].Checkpoint})
	if e.get("a.txt") != "v1" {
		t.Errorf("after rewind: %q", e.get("a.txt"))
	}
}

func TestReadOnlyProfile(t *testing.T) {
	e := newEnv(t, tools.Options{ReadOnly: true})
	var names []string
	for _, tl := range e.set.Tools() {
		if !tl.ReadOnly {
			t.Errorf("read-only profile exposes %s", tl.Name)
		}
		names = append(names, tl.Name)
	}
	if got := strings.Join(names, " "); got != "read ls stat glob grep checkpoints diff conflicts compare history" {
		t.Errorf("read-only tools = %s", got)
	}
	e.fails("write", M{"path": "a", "content": "x"}, `unknown tool "write"`)
}

// fakeShell runs nothing; it reports a canned result.
type fakeShell struct{ req provider.ExecRequest }

func (s *fakeShell) Exec(_ context.Context, req provider.ExecRequest) (provider.ExecResult, error) {
	s.req = req
	return provider.ExecResult{ExitCode: 1, Stdout: "ok\n", Stderr: "FAIL x_test.go\n",
		Changed: []provider.Change{{Path: "out.txt", Op: "created"}}}, nil
}

type shellWorkspace struct {
	provider.Workspace
	sh provider.Shell
}

func (w shellWorkspace) Shell() provider.Shell { return w.sh }

func TestExec(t *testing.T) {
	rec := &recorder{}
	e := newEnv(t, tools.Options{Recorder: rec})
	e.fails("exec", M{"command": "ls"}, "exec is not available")
	sh := &fakeShell{}
	ws := shellWorkspace{e.ws, sh}
	res := e.set.Call(context.Background(), tools.Direct(ws), "exec", []byte(`{"command":"go test ./...","timeout_seconds":30}`))
	if res.IsError || res.Text != "exit code 1 (0s)\nused: 0.00s CPU, 0.0 MiB peak memory, 0.0 MiB written, 0 files changed\nstdout:\nok\nstderr:\nFAIL x_test.go\nchanged:\n  created out.txt" {
		t.Errorf("exec = %+v", res)
	}
	if sh.req.Command != "go test ./..." || sh.req.Timeout.Seconds() != 30 || sh.req.Network || sh.req.MaxOutput == 0 {
		t.Errorf("request = %+v", sh.req)
	}
	if n := len(rec.es); n != 2 || rec.es[1].Changed[0] != "out.txt" || !strings.HasPrefix(rec.es[1].Detail, "exit code 1; 0.00s CPU") {
		t.Errorf("audit = %+v", rec.es)
	}
	res = e.set.Call(context.Background(), tools.Direct(ws), "exec", []byte(`{"command":"  "}`))
	if !res.IsError {
		t.Error("empty command accepted")
	}
}

// TestAutoCheckpointLabels: automatic checkpoints are taken before
// mutating calls only, and their repeated label names the newest, so
// restore and diff by it work.
func TestAutoCheckpointLabels(t *testing.T) {
	e := newEnv(t, tools.Options{AutoCheckpoint: true})
	e.ok("write", M{"path": "a.txt", "content": "v1\n"})
	e.ok("write", M{"path": "a.txt", "content": "v2\n"})
	for _, c := range []struct {
		tool string
		args M
	}{
		{"read", M{"path": "a.txt"}}, {"ls", M{}}, {"stat", M{"path": "a.txt"}}, {"glob", M{"pattern": "*"}},
		{"grep", M{"pattern": "v"}}, {"checkpoints", M{}}, {"diff", M{}},
	} {
		e.ok(c.tool, c.args)
	}
	cps, err := e.ws.Snapshots().Checkpoints(context.Background())
	if err != nil || len(cps) != 2 {
		t.Fatalf("checkpoints after 2 writes and read-only calls: %d (%v), want 2", len(cps), err)
	}
	label := audit.Label("write")
	if got := e.ok("diff", M{"from": label}); !strings.Contains(got, "-v1") || !strings.Contains(got, "+v2") {
		t.Errorf("diff from %q = %q", label, got)
	}
	e.ok("restore", M{"checkpoint": label})
	if got := e.get("a.txt"); got != "v1\n" {
		t.Errorf("after restoring %q: %q, want v1", label, got)
	}
}

// TestDiffAgainstParent: a session working in a fork diffs against the
// state it was forked from with from="@parent"; a workspace that is not a
// fork is told so.
func TestDiffAgainstParent(t *testing.T) {
	ctx := context.Background()
	open := sessions(t)
	set := tools.New(tools.Options{})
	call := func(ws provider.Workspace, name string, args string) tools.Result {
		return set.Call(ctx, tools.Direct(ws), name, json.RawMessage(args))
	}
	parent := open("parent")
	call(parent, "write", `{"path":"a.txt","content":"v1\n"}`)
	if r := call(parent, "fork", `{"name":"child"}`); r.IsError {
		t.Fatal(r.Text)
	}
	child := open("child")
	call(child, "write", `{"path":"a.txt","content":"v2\n"}`)
	call(child, "write", `{"path":"new.txt","content":"n\n"}`)
	r := call(child, "diff", `{"from":"@parent"}`)
	if r.IsError || !strings.Contains(r.Text, "2 changes from @parent") || !strings.Contains(r.Text, "+v2") || !strings.Contains(r.Text, "added new.txt") {
		t.Errorf("child diff from @parent = %q", r.Text)
	}
	if r := call(parent, "diff", `{"from":"@parent"}`); !r.IsError || !strings.Contains(r.Text, "not a fork") {
		t.Errorf("parent diff from @parent = %+v", r)
	}
}
