package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/forkspace/forkspace/audit"
	"github.com/forkspace/forkspace/httpapi"
)

// TestServeRefusesForeignOrigin is the regression test of issue 10 §4: a
// request with a foreign Origin got 200 (only a foreign Host was refused,
// and only at /mcp). Every route now refuses both.
func TestServeRefusesForeignOrigin(t *testing.T) {
	c := newCLI(t)
	url, stop := serve(t, c.store)
	defer stop()
	base := strings.TrimSuffix(url, "/mcp")
	for _, tc := range []struct{ method, path, host, origin string }{
		{"GET", "/healthz", "", "http://evil.example"},
		{"POST", "/mcp", "", "http://evil.example"},
		{"GET", "/mcp", "", "null"},
		{"GET", "/healthz", "evil.example", ""},
	} {
		req, _ := http.NewRequest(tc.method, base+tc.path, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		if tc.origin != "" {
			req.Header.Set("Origin", tc.origin)
		}
		if tc.host != "" {
			req.Host = tc.host
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), `"code":"forbidden"`) {
			t.Errorf("%s %s (Host %q, Origin %q): %d %s, want 403", tc.method, tc.path, tc.host, tc.origin, resp.StatusCode, body)
		}
	}
	req, _ := http.NewRequest("GET", base+"/healthz", nil)
	req.Header.Set("Origin", base)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("own origin: %d", resp.StatusCode)
	}
}

// TestServeRefusesNonLoopback: serve on an address other hosts can reach
// refuses to start without --insecure (and binds nothing: the check
// comes before the listener).
func TestServeRefusesNonLoopback(t *testing.T) {
	c := newCLI(t)
	for _, addr := range []string{"0.0.0.0:0", ":0", "[::]:0"} {
		msg := c.fails(exitUsage, nil, "serve", "--addr", addr)
		if !strings.Contains(msg, "--insecure") {
			t.Errorf("serve --addr %s: %q does not say how to proceed", addr, msg)
		}
	}
}

// TestServeREST: serve answers the REST API beside MCP on one listener,
// over the same store: a file uploaded through REST is what an MCP
// session reads, and an MCP write is what REST downloads.
func TestServeREST(t *testing.T) {
	c := newCLI(t)
	url, stop := serve(t, c.store)
	defer stop()
	ctx := context.Background()
	api, err := httpapi.NewClient(strings.TrimSuffix(url, "/mcp"), httpapi.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := api.CreateWorkspace(ctx, httpapi.CreateRequest{Name: "web"}); err != nil {
		t.Fatal(err)
	}
	if _, err := api.Write(ctx, "web", "from-rest.txt", strings.NewReader("rest\n"), httpapi.WriteRequest{}); err != nil {
		t.Fatal(err)
	}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "rest-test", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: url + "?workspace=web"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if text, _ := mcpCall(t, cs, "read", map[string]any{"path": "from-rest.txt"}); !strings.Contains(text, "rest") {
		t.Errorf("MCP read of a REST upload: %q", text)
	}
	if text, isErr := mcpCall(t, cs, "write", map[string]any{"path": "from-mcp.txt", "content": "mcp\n"}); isErr {
		t.Fatal(text)
	}
	d, err := api.Open(ctx, "web", "from-mcp.txt", httpapi.ReadRequest{Length: -1})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(d)
	d.Close()
	if string(got) != "mcp\n" {
		t.Errorf("REST download of an MCP write: %q", got)
	}
	es, err := api.Audit(ctx, "web", audit.Filter{})
	if err != nil || len(es) < 2 {
		t.Errorf("audit: %v %+v", err, es)
	}
}
