package mcpserver_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/provider"
	"github.com/forkspace/forkspace/sandbox"
	"github.com/forkspace/forkspace/tools"
)

// TestExecProgressOverMCP: a client that sends a progress token with an
// exec call gets notifications/progress, carrying its token, the elapsed
// time and the output so far, while the command runs (the real sandbox);
// a call without a token gets none.
func TestExecProgressOverMCP(t *testing.T) {
	ctx := context.Background()
	shell := func(_ context.Context, w *forkspace.Workspace) (provider.Shell, error) {
		return sandbox.New(w, sandbox.Options{WorkDir: t.TempDir() + "/work"}), nil
	}
	srv, _ := newShellServer(t, tools.Options{ProgressInterval: 50 * time.Millisecond}, shell)
	got := make(chan *mcp.ProgressNotificationParams, 1000)
	c := mcp.NewClient(&mcp.Implementation{Name: "progress-test", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) { got <- req.Params },
	})
	ct, st := mcp.NewInMemoryTransports()
	sctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(sctx, st, "progress") }()
	cs, err := c.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close(); cancel(); <-done })

	if text, isErr := call(t, cs, "exec", M{"command": "true"}); isErr || len(got) != 0 {
		t.Fatalf("exec without a token: %q, %d notifications", text, len(got))
	}
	params := &mcp.CallToolParams{Name: "exec", Arguments: M{"command": "echo hello; sleep 2"}}
	params.SetProgressToken("tok-1")
	res, err := cs.CallTool(ctx, params)
	if err != nil || res.IsError {
		t.Fatalf("exec: %v %+v", err, res)
	}
	var last float64
	sawOutput := false
	for n := 0; !sawOutput; n++ {
		var p *mcp.ProgressNotificationParams
		select {
		case p = <-got:
		case <-time.After(10 * time.Second): // the notifications were sent before the result
			t.Fatalf("%d progress notifications, none with the output so far", n)
		}
		if p.ProgressToken != "tok-1" || p.Progress < last {
			t.Errorf("notification %+v after progress %v", p, last)
		}
		last = p.Progress
		sawOutput = strings.Contains(p.Message, "6 bytes of output")
	}
}
