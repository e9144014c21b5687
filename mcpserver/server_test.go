package mcpserver_test

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"io/fs"
	"log/slog"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/forkspace/forkspace/mcpserver"
	"github.com/forkspace/forkspace/provider"
	"github.com/forkspace/forkspace/provider/localprovider"
	"github.com/forkspace/forkspace/provider/memprovider"
	"github.com/forkspace/forkspace/tools"
)

var quiet = slog.New(slog.DiscardHandler)

// newServer returns a server over an in-memory provider.
func newServer(t testing.TB, topts tools.Options) (*mcpserver.Server, *provider.Manager) {
	t.Helper()
	return newShellServer(t, topts, nil)
}

// newShellServer returns a server over an in-memory provider whose
// workspaces have the shell module shell (nil: none).
func newShellServer(t testing.TB, topts tools.Options, shell localprovider.ShellFunc) (*mcpserver.Server, *provider.Manager) {
	t.Helper()
	ctx := context.Background()
	p, err := memprovider.New(ctx, memprovider.Options{Logger: quiet, Shell: shell})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	var reg provider.Registry
	reg.Register(p)
	m := provider.NewManager(provider.ManagerOptions{Registry: &reg, Logger: quiet})
	t.Cleanup(func() { m.Close(ctx) })
	srv := mcpserver.New(mcpserver.Options{
		Manager:        m,
		SessionTimeout: time.Second,
		Config: func(name string) provider.Config {
			return memprovider.Config{Config: localprovider.Config{Workspace: name}}
		},
		Tools:  topts,
		Logger: quiet,
	})
	return srv, m
}

// connectInMemory serves one session over in-memory transports and returns
// the client side.
func connectInMemory(t testing.TB, srv *mcpserver.Server, workspace string) *mcp.ClientSession {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ct, st := mcp.NewInMemoryTransports()
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ctx, st, workspace) }()
	c := mcp.NewClient(&mcp.Implementation{Name: "test-client", Version: "1"}, nil)
	cs, err := c.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		cancel()
		<-done
	})
	return cs
}

// call calls a tool and returns its text and error flag.
func call(t testing.TB, cs *mcp.ClientSession, name string, args any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("call %s: protocol error %v", name, err)
	}
	var b strings.Builder
	for _, c := range res.Content {
		b.WriteString(c.(*mcp.TextContent).Text)
	}
	return b.String(), res.IsError
}

type M = map[string]any

func TestToolsOverMCP(t *testing.T) {
	srv, _ := newServer(t, tools.Options{AutoCheckpoint: true})
	cs := connectInMemory(t, srv, "proj")
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, tl := range list.Tools {
		names = append(names, tl.Name)
		if tl.Annotations == nil || tl.InputSchema == nil {
			t.Errorf("%s: no annotations or schema", tl.Name)
		}
	}
	for _, want := range []string{"read", "write", "edit", "ls", "glob", "grep", "stat", "rm", "mkdir", "mv", "exec", "checkpoint", "restore", "diff", "fork"} {
		if !slices.Contains(names, want) {
			t.Errorf("tools/list lacks %s: %v", want, names)
		}
	}
	if text, isErr := call(t, cs, "write", M{"path": "src/main.go", "content": "package main\n"}); isErr || !strings.Contains(text, "created src/main.go") {
		t.Errorf("write: %q", text)
	}
	if text, isErr := call(t, cs, "read", M{"path": "/src/main.go"}); isErr || text != "     1\tpackage main" {
		t.Errorf("read: %q", text)
	}
	// Tool failures are results with isError, not protocol errors.
	if text, isErr := call(t, cs, "read", M{"path": "../../etc/passwd"}); !isErr || !strings.Contains(text, "escapes the workspace") {
		t.Errorf("escape: %q %v", text, isErr)
	}
	if text, isErr := call(t, cs, "read", M{"path": "src/mian.go"}); !isErr || !strings.Contains(text, "did you mean src/main.go?") {
		t.Errorf("missing file: %q", text)
	}
	if text, isErr := call(t, cs, "exec", M{"command": "true"}); !isErr || !strings.Contains(text, "exec is not available") {
		t.Errorf("exec without shell: %q", text)
	}
	if _, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "nope"}); err == nil {
		t.Error("unknown tool: no protocol error")
	}

	// diff, merge, cherry_pick, conflicts, compare, promote and history also return structured
	// content, described by their output schemas.
	structured := map[string]bool{"diff": true, "merge": true, "cherry_pick": true, "conflicts": true, "compare": true, "promote": true, "history": true}
	for _, tl := range list.Tools {
		if (tl.OutputSchema != nil) != structured[tl.Name] {
			t.Errorf("%s: output schema %v", tl.Name, tl.OutputSchema)
		}
	}
	call(t, cs, "checkpoint", M{"label": "s"})
	call(t, cs, "write", M{"path": "src/b.go", "content": "package main\n"})
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "diff", Arguments: M{"from": "s"}})
	if err != nil || res.IsError {
		t.Fatalf("diff: %v %+v", err, res)
	}
	data, err := json.Marshal(res.StructuredContent)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		From    string
		Changes []struct{ Op, Path string }
	}
	if err := json.Unmarshal(data, &out); err != nil || out.From != "s" || len(out.Changes) != 1 || out.Changes[0].Op != "added" || out.Changes[0].Path != "src/b.go" {
		t.Errorf("diff structured content: %s (%v)", data, err)
	}
}

func TestReadOnlyOverMCP(t *testing.T) {
	srv, _ := newServer(t, tools.Options{ReadOnly: true})
	cs := connectInMemory(t, srv, "")
	list, err := cs.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tl := range list.Tools {
		if !tl.Annotations.ReadOnlyHint {
			t.Errorf("read-only server exposes %s", tl.Name)
		}
	}
}

// TestHTTPSessions: each HTTP session works in the workspace its URL names,
// or in one of its own; sessions never see each other's files.
func TestHTTPSessions(t *testing.T) {
	srv, _ := newServer(t, tools.Options{})
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	ctx := context.Background()
	connect := func(query string) *mcp.ClientSession {
		c := mcp.NewClient(&mcp.Implementation{Name: "http-client", Version: "1"}, nil)
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: hs.URL + query}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return cs
	}
	a1, a2, b := connect("?workspace=shared"), connect("?workspace=shared"), connect("")
	if _, isErr := call(t, a1, "write", M{"path": "a.txt", "content": "from a1"}); isErr {
		t.Fatal("write failed")
	}
	if text, _ := call(t, a2, "read", M{"path": "a.txt"}); text != "     1\tfrom a1" {
		t.Errorf("same workspace, other session: %q", text)
	}
	if text, isErr := call(t, b, "read", M{"path": "a.txt"}); !isErr || !strings.Contains(text, "no such file") {
		t.Errorf("own workspace sees another's file: %q", text)
	}
	call(t, b, "write", M{"path": "b.txt", "content": "b"})
	if text, _ := call(t, a1, "ls", M{}); text != "a.txt (7 bytes)" {
		t.Errorf("ls in shared = %q", text)
	}
	for _, cs := range []*mcp.ClientSession{a1, a2, b} {
		if err := cs.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	}
	// A new session on the named workspace finds its files again.
	a3 := connect("?workspace=shared")
	defer a3.Close()
	if text, _ := call(t, a3, "read", M{"path": "a.txt"}); text != "     1\tfrom a1" {
		t.Errorf("reconnect: %q", text)
	}
}

// TestHTTPIdleSessionEnds: an idle HTTP session times out and its
// provider session is closed (its ref dropped).
func TestHTTPIdleSessionEnds(t *testing.T) {
	srv, m := newServer(t, tools.Options{})
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	c := mcp.NewClient(&mcp.Implementation{Name: "idle", Version: "1"}, nil)
	cs, err := c.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: hs.URL + "?workspace=idle", MaxRetries: -1}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if _, isErr := call(t, cs, "ls", M{}); isErr {
		t.Fatal("ls failed")
	}
	session := provider.Session{ID: "mcp-" + cs.ID()}
	if _, err := m.Ref(context.Background(), session, "workspace"); err != nil {
		t.Fatalf("ref of the live session: %v", err)
	}
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if _, err := m.Ref(context.Background(), session, "workspace"); errors.Is(err, fs.ErrNotExist) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("idle session still holds its workspace")
		}
	}
}

// TestPipelinedStdio: a client that writes initialize, initialized and a
// tool call at once (no waiting) still gets its workspace.
func TestPipelinedStdio(t *testing.T) {
	srv, _ := newServer(t, tools.Options{})
	for i := range 20 {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- srv.Serve(ctx, &mcp.IOTransport{Reader: inR, Writer: outW}, "") }()
		go io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"1"}}}
{"jsonrpc":"2.0","method":"notifications/initialized"}
{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"write","arguments":{"path":"a.txt","content":"x"}}}
`)
		lines := bufio.NewScanner(outR)
		for lines.Scan() {
			var msg struct {
				ID     int `json:"id"`
				Result struct {
					IsError bool `json:"isError"`
					Content []struct {
						Text string `json:"text"`
					} `json:"content"`
				} `json:"result"`
			}
			if err := json.Unmarshal(lines.Bytes(), &msg); err != nil {
				t.Fatal(err)
			}
			if msg.ID == 2 {
				if msg.Result.IsError || !strings.HasPrefix(msg.Result.Content[0].Text, "created a.txt") {
					t.Errorf("run %d: %s", i, lines.Text())
				}
				break
			}
		}
		inW.Close()
		cancel()
		<-done
		outR.Close()
	}
}
