package main

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// bearer adds a token to every request.
type bearer struct{ token string }

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return http.DefaultTransport.RoundTrip(r)
}

// mcpConnect connects an MCP client to endpoint with token ("" none).
func mcpConnect(endpoint, token string) (*mcp.ClientSession, error) {
	hc := &http.Client{}
	if token != "" {
		hc.Transport = bearer{token}
	}
	return mcp.NewClient(&mcp.Implementation{Name: "token-test", Version: "1"}, nil).
		Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: endpoint, HTTPClient: hc}, nil)
}

// initialize sends an MCP initialize request and returns the status and
// body.
func initialize(t *testing.T, endpoint, token string) (int, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", endpoint, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestMCPTokens: the MCP endpoint checks the token at connect (the
// workspace it names must be one the token reaches: 404 as for a missing
// one) and on every tool call (read-only tokens do not write, tokens
// without exec do not run commands, fork and merge stay inside the
// pattern); a token of one workspace gets it without naming it.
func TestMCPTokens(t *testing.T) {
	c := newCLI(t)
	c.ok(nil, "workspace", "create", "w")
	c.ok(nil, "workspace", "create", "other")
	c.ok([]byte("secret"), "-w", "other", "put", "-", "s")
	admin := strings.TrimSpace(c.ok(nil, "token", "create", "--tenant", "*", "--perm", "all"))
	rw := strings.TrimSpace(c.ok(nil, "token", "create", "--workspaces", "w", "--perm", "read,write"))
	ro := strings.TrimSpace(c.ok(nil, "token", "create", "--workspaces", "w", "--perm", "read"))
	url, stop := serve(t, c.store)
	defer stop()

	if st, body := initialize(t, url+"?workspace=w", ""); st != 401 {
		t.Errorf("connect without a token: %d %s", st, body)
	}
	if st, body := initialize(t, url+"?workspace=w&access_token="+rw, ""); st != 400 {
		t.Errorf("a token in the query string: %d %s", st, body)
	}
	st1, b1 := initialize(t, url+"?workspace=other", rw)
	st2, b2 := initialize(t, url+"?workspace=zzzzz", rw)
	if st1 != 404 || st1 != st2 || strings.ReplaceAll(b1, "other", "X") != strings.ReplaceAll(b2, "zzzzz", "X") {
		t.Errorf("connect to a workspace outside the token: %d %q; to a missing one: %d %q", st1, b1, st2, b2)
	}
	if st, body := initialize(t, url+"?workspace=bad%20name", rw); st != 400 {
		t.Errorf("connect with an invalid name: %d %s", st, body)
	}

	cs, err := mcpConnect(url+"?workspace=w", rw)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	if text, isErr := mcpCall(t, cs, "write", map[string]any{"path": "f", "content": "by rw\n"}); isErr {
		t.Fatalf("write with a read-write token: %s", text)
	}
	for _, call := range []struct {
		tool string
		args map[string]any
	}{
		{"exec", map[string]any{"command": "echo hi > g"}},
		{"fork", map[string]any{"name": "elsewhere"}},
		{"merge", map[string]any{"from": "other"}},
		{"cherry_pick", map[string]any{"from": "other", "paths": []string{"s"}}},
	} {
		if text, isErr := mcpCall(t, cs, call.tool, call.args); !isErr || strings.Contains(text, "secret") {
			t.Errorf("%s beyond the token: %v %q", call.tool, isErr, text)
		}
	}
	// A token of one workspace works in it without naming it.
	ros, err := mcpConnect(url, ro)
	if err != nil {
		t.Fatal(err)
	}
	defer ros.Close()
	if text, isErr := mcpCall(t, ros, "read", map[string]any{"path": "f"}); isErr || !strings.Contains(text, "by rw") {
		t.Errorf("read-only reads %v %q", isErr, text)
	}
	if text, isErr := mcpCall(t, ros, "write", map[string]any{"path": "f", "content": "x"}); !isErr {
		t.Errorf("a read-only token wrote: %q", text)
	}
	// Every tool that is not read-only is refused to the read-only token,
	// before it looks at its arguments.
	tl, err := ros.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tl.Tools {
		if tool.Annotations != nil && tool.Annotations.ReadOnlyHint && !strings.HasPrefix(tool.Name, "exec") {
			continue
		}
		if text, isErr := mcpCall(t, ros, tool.Name, map[string]any{}); !isErr || !strings.Contains(text, "permission") {
			t.Errorf("%s with a read-only token: %v %q", tool.Name, isErr, text)
		}
	}
	if out := c.ok(nil, "--token", rw, "-w", "w", "cat", "f"); out != "by rw\n" {
		t.Errorf("after the refused calls w/f is %q", out)
	}
	if out := c.ok(nil, "--token", rw, "workspace", "list"); strings.Contains(out, "elsewhere") {
		t.Errorf("a refused fork made a workspace: %s", out)
	}

	// A token of a fork reads nothing of its parent through @parent.
	c.ok(nil, "--token", admin, "workspace", "fork", "other", "other-fork")
	forkTok := strings.TrimSpace(c.ok(nil, "--token", admin, "token", "create", "--workspaces", "other-fork", "--perm", "read,write"))
	c.ok([]byte("later"), "--token", admin, "-w", "other", "put", "-", "s")
	fcs, err := mcpConnect(url, forkTok)
	if err != nil {
		t.Fatal(err)
	}
	defer fcs.Close()
	for _, call := range []struct {
		tool string
		args map[string]any
	}{
		{"diff", map[string]any{"from": "@parent"}},
		{"merge", map[string]any{"from": "@parent"}},
		{"cherry_pick", map[string]any{"from": "@parent", "paths": []string{"s"}}},
	} {
		if text, isErr := mcpCall(t, fcs, call.tool, call.args); !isErr || strings.Contains(text, "later") || strings.Contains(text, `"other"`) {
			t.Errorf("%s from @parent with a token of the fork: %v %q", call.tool, isErr, text)
		}
	}
	if text, isErr := mcpCall(t, fcs, "read", map[string]any{"path": "s"}); isErr || !strings.Contains(text, "secret") {
		t.Errorf("the fork's own copy: %v %q", isErr, text)
	}
}

// TestMCPSessionWorkspace: without tokens, an invalid ?workspace= is
// refused at connect, and a session that names no workspace works in one
// that is gone when it ends (none is left per session), unless
// ?keep=true.
func TestMCPSessionWorkspace(t *testing.T) {
	c := newCLI(t)
	url, stop := serve(t, c.store)
	defer stop()
	if _, err := mcpConnect(url+"?workspace=..", ""); err == nil {
		t.Error("connect with an invalid workspace name succeeded")
	}
	if st, body := initialize(t, url+"?workspace=-x", ""); st != 400 || !strings.Contains(body, "-x") {
		t.Errorf("connect with an invalid name: %d %s", st, body)
	}
	for _, keep := range []bool{false, true} {
		endpoint := url
		if keep {
			endpoint += "?keep=true"
		}
		cs, err := mcpConnect(endpoint, "")
		if err != nil {
			t.Fatal(err)
		}
		if text, isErr := mcpCall(t, cs, "write", map[string]any{"path": "f", "content": "x"}); isErr {
			t.Fatal(text)
		}
		if out := c.ok(nil, "workspace", "list"); !strings.Contains(out, "session-") {
			t.Fatalf("the session's workspace is not listed while it runs: %s", out)
		}
		cs.Close()
		// The server ends the session when the client's DELETE arrives.
		deadline := time.Now().Add(30 * time.Second)
		for strings.Contains(c.ok(nil, "workspace", "list"), "session-") != keep && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
		if got := strings.Contains(c.ok(nil, "workspace", "list"), "session-"); got != keep {
			t.Errorf("keep=%v: a session workspace is left: %v", keep, got)
		}
	}
}
