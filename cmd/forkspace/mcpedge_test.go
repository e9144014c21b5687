package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/forkspace/forkspace/mcpserver"
)

// TestMCPStdioAnswersEveryRequest writes a whole session to `forkspace
// mcp` at once and closes its input: every request is answered and
// executed (before, those after initialize were dropped when stdin
// closed), an unknown method gets JSON-RPC's method-not-found, and a
// request the client cancels is stopped and not answered.
func TestMCPStdioAnswersEveryRequest(t *testing.T) {
	c := newCLI(t)
	c.ok(nil, "workspace", "create", "s")
	var in bytes.Buffer
	send := func(v any) {
		b, _ := json.Marshal(v)
		in.Write(append(b, '\n'))
	}
	send(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{}, "clientInfo": map[string]any{"name": "raw", "version": "1"}}})
	send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
	for i := range 10 {
		send(map[string]any{"jsonrpc": "2.0", "id": 10 + i, "method": "tools/call", "params": map[string]any{
			"name": "write", "arguments": map[string]any{"path": fmt.Sprintf("f%d.txt", i), "content": "x"}}})
	}
	send(map[string]any{"jsonrpc": "2.0", "id": 99, "method": "no/such/method"})
	send(map[string]any{"jsonrpc": "2.0", "id": 100, "method": "tools/call", "params": map[string]any{
		"name": "exec", "arguments": map[string]any{"command": "sleep 20; echo late > late.txt"}}})
	send(map[string]any{"jsonrpc": "2.0", "method": "notifications/cancelled", "params": map[string]any{"requestId": 100}})

	out := c.ok(in.Bytes(), "mcp", "-w", "s")
	answered := map[int]json.RawMessage{}
	lines := bufio.NewScanner(strings.NewReader(out))
	for lines.Scan() {
		var m struct {
			ID    *int            `json:"id"`
			Error json.RawMessage `json:"error"`
		}
		if err := json.Unmarshal(lines.Bytes(), &m); err != nil {
			t.Fatalf("%v: %s", err, lines.Text())
		}
		if m.ID != nil {
			answered[*m.ID] = m.Error
		}
	}
	for i := range 10 {
		if _, ok := answered[10+i]; !ok {
			t.Errorf("request %d (a write) was not answered", 10+i)
		}
	}
	if e := answered[99]; !strings.Contains(string(e), "-32601") {
		t.Errorf("unknown method answered %s, want JSON-RPC error -32601", e)
	}
	if _, ok := answered[100]; ok {
		t.Errorf("the cancelled request was answered: %s", answered[100])
	}
	ls := c.ok(nil, "ls", "-w", "s")
	for i := range 10 {
		if !strings.Contains(ls, fmt.Sprintf("f%d.txt", i)) {
			t.Errorf("f%d.txt was not written: %s", i, ls)
		}
	}
	if strings.Contains(ls, "late.txt") {
		t.Error("the cancelled command was not stopped: late.txt exists")
	}
}

// TestMCPHTTPEdge: over HTTP an unknown method is a JSON-RPC error (not
// HTTP 400), and a tool call larger than the request limit is a tool error
// naming the limit after which the client's session goes on (not HTTP 413
// tearing the session down).
func TestMCPHTTPEdge(t *testing.T) {
	c := newCLI(t)
	c.ok(nil, "workspace", "create", "e")
	mcpURL, stop := serve(t, c.store)
	defer stop()

	req, _ := http.NewRequest("POST", mcpURL+"?workspace=e", strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"no/such/method"}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var rpc struct {
		ID    int `json:"id"`
		Error struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	err = json.NewDecoder(resp.Body).Decode(&rpc)
	resp.Body.Close()
	if err != nil || resp.StatusCode != 200 || rpc.ID != 7 || rpc.Error.Code != -32601 {
		t.Errorf("unknown method: HTTP %d, %+v (%v); want 200 and JSON-RPC error -32601 for id 7", resp.StatusCode, rpc, err)
	}

	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "edge", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: mcpURL + "?workspace=e"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	text, isErr := mcpCall(t, cs, "write", map[string]any{"path": "big.txt", "content": strings.Repeat("b", mcpserver.MaxRequestBytes+1)})
	if !isErr || !strings.Contains(text, "4 MiB") || !strings.Contains(text, "nothing was done") {
		t.Errorf("oversized write: %v %q; want a tool error naming the 4 MiB limit", isErr, text)
	}
	if text, isErr := mcpCall(t, cs, "write", map[string]any{"path": "small.txt", "content": "fits"}); isErr {
		t.Errorf("the session did not survive the oversized call: %s", text)
	}
	if ls := c.ok(nil, "ls", "-w", "e"); strings.Contains(ls, "big.txt") || !strings.Contains(ls, "small.txt") {
		t.Errorf("workspace after the calls: %s", ls)
	}
}
