package tools_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/provider"
	"github.com/forkspace/forkspace/provider/memprovider"
	"github.com/forkspace/forkspace/sandbox"
	"github.com/forkspace/forkspace/tools"
)

// TestExecInSandbox runs exec through the memory provider with the
// sandbox's shell module (bubblewrap): the command sees the workspace as
// its working directory, its changes come back, the host stays hidden.
func TestExecInSandbox(t *testing.T) {
	ctx := context.Background()
	shell := func(_ context.Context, w *forkspace.Workspace) (provider.Shell, error) {
		return sandbox.New(w, sandbox.Options{WorkDir: t.TempDir() + "/work"}), nil
	}
	p, err := memprovider.New(ctx, memprovider.Options{Logger: slog.New(slog.DiscardHandler), Shell: shell})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	ws, ref, err := p.Open(ctx, memprovider.Config{}, provider.Session{ID: "exec"}, &provider.Capabilities{FS: true, Shell: true})
	if err != nil || !ref.Capabilities.Shell || ws.Shell() == nil {
		t.Fatalf("open with shell: %v, %+v", err, ref.Capabilities)
	}
	e := &env{t: t, ws: ws, set: tools.New(tools.Options{AutoCheckpoint: true})}
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
	// The automatic checkpoint before the first exec rewinds it.
	second := strings.Split(e.ok("checkpoints", M{}), "\n")[1] // before the first exec
	e.ok("restore", M{"checkpoint": strings.Fields(second)[0]})
	if e.get("in.txt") != "hello\n" {
		t.Errorf("rewind of exec: in.txt = %q", e.get("in.txt"))
	}
}
