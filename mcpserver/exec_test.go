package mcpserver_test

import (
	"context"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/internal/sandboxtest"
	"github.com/forkspace/forkspace/mount/mounttest"
	"github.com/forkspace/forkspace/provider"
	"github.com/forkspace/forkspace/provider/localprovider"
	"github.com/forkspace/forkspace/sandbox"
	"github.com/forkspace/forkspace/tools"
)

// sandboxShell builds the sandbox's shell module in a test's temporary
// directory.
func sandboxShell(t *testing.T) localprovider.ShellFunc {
	return func(_ context.Context, w *forkspace.Workspace) (provider.Shell, error) {
		return sandbox.New(w, sandbox.Options{WorkDir: sandboxtest.WorkDir(t)}), nil
	}
}

// TestBackgroundRunEndsWithSession: when the client of a session goes
// away, the background runs it started are killed (a run of 600 s went
// on after its session), and another session of the workspace sees it
// finished.
func TestBackgroundRunEndsWithSession(t *testing.T) {
	srv, _ := newShellServer(t, tools.Options{}, sandboxShell(t))
	ct, st := mcp.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(context.Background(), st, "bg") }()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bg-test", Version: "1"}, nil).Connect(context.Background(), ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	text, isErr := call(t, cs, "exec", M{"command": "sleep 600", "background": true, "timeout_seconds": 3600})
	if isErr || !strings.Contains(text, "started run-") {
		t.Fatalf("background exec: %q", text)
	}
	id := strings.Fields(text)[1]
	if text, _ := call(t, cs, "exec_status", M{"run": id}); !strings.Contains(text, "is running") {
		t.Fatalf("exec_status: %q", text)
	}
	cs.Close()
	mounttest.Within(t, "Serve after its client left with a background run", func() {
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	if text, _ := call(t, connectInMemory(t, srv, "bg"), "exec_status", M{"run": id}); !strings.Contains(text, id+" finished") {
		t.Errorf("a run after its session ended: %q", text)
	}
}

// TestExecProgressOverMCP: a client that sends a progress token with an
// exec call gets notifications/progress, carrying its token, the elapsed
// time and the output so far, while the command runs (the real sandbox);
// a call without a token gets none. Over the in-memory transport and
// streamable HTTP.
func TestExecProgressOverMCP(t *testing.T) {
	for _, transport := range []string{"memory", "http"} {
		t.Run(transport, func(t *testing.T) { testExecProgress(t, transport) })
	}
}

func testExecProgress(t *testing.T, transport string) {
	ctx := context.Background()
	srv, _ := newShellServer(t, tools.Options{ProgressInterval: 50 * time.Millisecond}, sandboxShell(t))
	got := make(chan *mcp.ProgressNotificationParams, 1000)
	c := mcp.NewClient(&mcp.Implementation{Name: "progress-test", Version: "1"}, &mcp.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) { got <- req.Params },
	})
	var ct mcp.Transport
	if transport == "http" {
		hs := httptest.NewServer(srv.Handler())
		t.Cleanup(hs.Close)
		ct = &mcp.StreamableClientTransport{Endpoint: hs.URL + "?workspace=progress"}
	} else {
		var st mcp.Transport
		ct, st = mcp.NewInMemoryTransports()
		sctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- srv.Serve(sctx, st, "progress") }()
		t.Cleanup(func() { cancel(); <-done })
	}
	cs, err := c.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })

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
