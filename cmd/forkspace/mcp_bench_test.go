package main

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// BenchmarkMCPToolCall is the latency of one small tool call (stat of a
// file) made by the SDK's client to the real binary: over stdio
// (forkspace mcp) and over streamable HTTP on loopback (forkspace serve).
func BenchmarkMCPToolCall(b *testing.B) {
	store := filepath.Join(b.TempDir(), "store")
	bench := func(b *testing.B, cs *mcp.ClientSession) {
		if text, isErr := mcpCall(b, cs, "write", map[string]any{"path": "a.txt", "content": "hello"}); isErr {
			b.Fatal(text)
		}
		params := &mcp.CallToolParams{Name: "stat", Arguments: map[string]any{"path": "a.txt"}}
		b.ReportAllocs()
		for b.Loop() {
			res, err := cs.CallTool(context.Background(), params)
			if err != nil || res.IsError {
				b.Fatal(err, res)
			}
		}
	}
	b.Run("stdio", func(b *testing.B) {
		cs := mcpStdio(b, store, "bench")
		defer cs.Close()
		bench(b, cs)
	})
	b.Run("http", func(b *testing.B) {
		url, stop := serve(b, store)
		defer stop()
		client := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
		cs, err := client.Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url + "?workspace=bench"}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		bench(b, cs)
	})
}
