package mcpserver_test

import (
	"context"
	"net/http/httptest"
	"runtime"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/forkspace/forkspace/tools"
)

// BenchmarkHTTPToolCall: small tool calls (stat of a file) over
// streamable HTTP on loopback by 32 concurrent sessions of the SDK's
// client, in one process so the server's share can be profiled
// (-cpuprofile). The workspace is in memory (memprovider): what is
// measured is the MCP and HTTP path, as the REST API's BenchmarkSmallFile
// measures its own.
func BenchmarkHTTPToolCall(b *testing.B) {
	srv, _ := newServer(b, tools.Options{})
	hs := httptest.NewServer(srv.Handler())
	defer hs.Close()
	ctx := context.Background()
	c := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil)
	procs := runtime.GOMAXPROCS(0)
	parallel := 32 / procs
	sessions := make(chan *mcp.ClientSession, parallel*procs)
	for range cap(sessions) {
		cs, err := c.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: hs.URL + "?workspace=bench"}, nil)
		if err != nil {
			b.Fatal(err)
		}
		defer cs.Close()
		sessions <- cs
	}
	cs := <-sessions
	if _, isErr := call(b, cs, "write", M{"path": "a.txt", "content": "hello"}); isErr {
		b.Fatal("write failed")
	}
	sessions <- cs
	params := &mcp.CallToolParams{Name: "stat", Arguments: M{"path": "a.txt"}}
	b.SetParallelism(parallel)
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		cs := <-sessions
		defer func() { sessions <- cs }()
		for pb.Next() {
			res, err := cs.CallTool(ctx, params)
			if err != nil || res.IsError {
				b.Error(err, res)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
}
