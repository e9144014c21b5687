package tools_test

import (
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/internal/sandboxtest"
	"github.com/forkspace/forkspace/provider"
	"github.com/forkspace/forkspace/provider/memprovider"
	"github.com/forkspace/forkspace/sandbox"
	"github.com/forkspace/forkspace/tools"
)

// TestExecInSandbox runs exec through the memory provider with the
// sandbox's shell module (bubblewrap): the command sees the workspace as
// its working directory, its changes come back, the host stays hidden.
func TestExecInSandbox(t *testing.T) {
	e := newSandboxEnv(t, tools.Options{AutoCheckpoint: true})
	e.ok("write", M{"path": "in.txt", "content": "hello\n"})
	got := e.ok("exec", M{"command": "tr a-z A-Z < in.txt > out.txt && mkdir -p d && echo x > d/y && rm in.txt && pwd"})
	for _, want := range []string{"exit code 0", "created out.txt", "deleted in.txt", "created d/y"} {
		if !strings.Contains(got, want) {
			t.Errorf("exec output lacks %q:\n%s", want, got)
		}
	}
	if e.get("out.txt") != "HELLO\n" {
		t.Errorf("out.txt = %q", e.get("out.txt"))
	}
	got = e.ok("exec", M{"command": "cat /etc/shadow 2>&1; ls ../ 2>&1; exit 3"})
	if !strings.Contains(got, "exit code 3") || strings.Contains(got, "root:") {
		t.Errorf("escape attempt:\n%s", got)
	}
	// The network is the operator's: asking for it under the default
	// policy (off) is refused, not granted.
	e.fails("exec", M{"command": "touch net", "network": true}, "network access is off")
	// The automatic checkpoint before the first exec rewinds it.
	second := strings.Split(e.ok("checkpoints", M{}), "\n")[1] // before the first exec
	e.ok("restore", M{"checkpoint": strings.Fields(second)[0]})
	if e.get("in.txt") != "hello\n" {
		t.Errorf("rewind of exec: in.txt = %q", e.get("in.txt"))
	}
}

// newSandboxEnv is an env whose workspace has the sandbox's shell module.
func newSandboxEnv(t *testing.T, opts tools.Options) *env {
	t.Helper()
	ctx := context.Background()
	shell := func(_ context.Context, w *forkspace.Workspace) (provider.Shell, error) {
		return sandbox.New(w, sandbox.Options{WorkDir: sandboxtest.WorkDir(t)}), nil
	}
	p, err := memprovider.New(ctx, memprovider.Options{Logger: slog.New(slog.DiscardHandler), Shell: shell})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	ws, ref, err := p.Open(ctx, memprovider.Config{}, provider.Session{ID: "exec"}, &provider.Capabilities{FS: true, Shell: true})
	if err != nil || !ref.Capabilities.Shell || ws.Shell() == nil {
		t.Fatalf("open with shell: %v, %+v", err, ref.Capabilities)
	}
	return &env{t: t, ws: ws, set: tools.New(opts)}
}

// TestExecHugeArguments: numeric arguments past their bounds are refused
// before anything runs (a huge timeout once overflowed into "timed out
// after 2ms"), and every bound is in the schema.
func TestExecHugeArguments(t *testing.T) {
	e := newSandboxEnv(t, tools.Options{})
	for _, arg := range []string{"timeout_seconds", "cpu_seconds", "memory_mib", "processes", "open_files", "disk_mib"} {
		e.fails("exec", M{"command": "echo ran > ran", arg: int64(1) << 62}, arg+" must be between 0 and")
		e.fails("exec", M{"command": "echo ran > ran", arg: -1}, arg+" must be between 0 and")
	}
	e.fails("exec", M{"command": "true", "timeout_seconds": 1e300}, "invalid arguments")
	if _, err := e.ws.FS().Stat(context.Background(), "ran"); err == nil {
		t.Error("a refused call ran its command")
	}
	for _, tl := range e.set.Tools() {
		for name, p := range tl.InputSchema.Properties {
			if p.Type == "integer" && (p.Minimum == nil || p.Maximum == nil) {
				t.Errorf("%s: integer argument %s has no bounds in its schema", tl.Name, name)
			}
		}
	}
	got := e.ok("exec", M{"command": "echo fine", "timeout_seconds": 86400})
	if !strings.HasPrefix(got, "exit code 0") {
		t.Errorf("exec with the largest timeout:\n%s", got)
	}
}

// TestExecResultBounded: a 1,000-deep mkdir -p lists 100 paths and
// counts the rest.
func TestExecResultBounded(t *testing.T) {
	e := newSandboxEnv(t, tools.Options{})
	got := e.ok("exec", M{"command": "mkdir -p $(printf 'd/%.0s' $(seq 1000))"})
	if len(got) > 50000 || !strings.Contains(got, "… and 900 more (900 created)") || !strings.Contains(got, "1000 files changed") {
		t.Errorf("result of a 1,000-deep mkdir (%d bytes):\n%.2000s", len(got), got)
	}
}

// TestExecReportsLimit: the result names the limit that stopped the run
// and what it used.
func TestExecReportsLimit(t *testing.T) {
	e := newSandboxEnv(t, tools.Options{})
	got := e.ok("exec", M{"command": "echo x > kept; head -c 3000000 /dev/zero > big", "disk_mib": 1})
	for _, want := range []string{"killed: disk limit 1 MiB", "none of the command's changes were kept", "used: "} {
		if !strings.Contains(got, want) {
			t.Errorf("result lacks %q:\n%s", want, got)
		}
	}
	if _, err := e.ws.FS().Stat(context.Background(), "kept"); err == nil {
		t.Error("a change of a run stopped by the disk limit was kept")
	}
}

// TestExecProgress: a long exec reports progress while it runs (an MCP
// server forwards it as progress notifications) and stops after.
func TestExecProgress(t *testing.T) {
	defer tools.SetProgressEvery(50 * time.Millisecond)()
	e := newSandboxEnv(t, tools.Options{})
	var mu sync.Mutex
	var msgs []string
	ctx := tools.WithProgress(context.Background(), func(_ float64, msg string) {
		mu.Lock()
		defer mu.Unlock()
		msgs = append(msgs, msg)
	})
	res := e.set.Call(ctx, tools.Direct(e.ws), "exec", []byte(`{"command":"sleep 1"}`))
	mu.Lock()
	n := len(msgs)
	mu.Unlock()
	if res.IsError || n == 0 || !strings.HasPrefix(msgs[0], "exec: running for") {
		t.Fatalf("exec of sleep 1: %v, progress %q", res, msgs)
	}
	time.Sleep(200 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	if len(msgs) != n {
		t.Errorf("progress reported after the call returned: %q", msgs[n:])
	}
}
