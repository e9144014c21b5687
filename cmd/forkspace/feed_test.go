package main

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/forkspace/forkspace/audit"
	"github.com/forkspace/forkspace/fusefs/fusetest"
	"github.com/forkspace/forkspace/httpapi"
)

// TestFeedEverySurface: one serve process with FUSE and WebDAV; a change
// to workspace w through each door — the CLI (through the server), MCP,
// exec in bubblewrap, a write through the FUSE mount, WebDAV, a restore,
// a merge from a fork, a mount's refresh and the hydration of a lazy
// file — is an event of w's stream, in sequence order, naming the path.
func TestFeedEverySurface(t *testing.T) {
	fusetest.Require(t)
	c := newCLI(t)
	host := t.TempDir()
	if err := os.WriteFile(filepath.Join(host, "lazy.md"), []byte("lazy"), 0o644); err != nil {
		t.Fatal(err)
	}
	c.ok(nil, "workspace", "create", "w", "--mount", "/host=file://"+host)
	c.ok(nil, "workspace", "fork", "w", "w2")
	c.ok(nil, "-w", "w", "checkpoint", "start")
	var last []audit.Entry
	c.json(&last, "log", "--limit", "1")
	mnt, davAddr := t.TempDir(), freeAddr(t)
	mcpURL, stop := serve(t, c.store, "--fuse", mnt, "--webdav", davAddr)
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute) // a hang guard
	defer cancel()
	client, err := httpapi.NewClient(strings.TrimSuffix(mcpURL, "/mcp"), httpapi.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	s, err := client.Events(ctx, "w", "", last[0].Seq)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()

	// want: a tool of w's stream and a path it names, per door.
	want := map[string]string{}
	door := func(tool, path string, do func()) {
		t.Helper()
		want[tool] = path
		do()
	}
	door("rest.write", "cli.txt", func() { c.ok([]byte("cli"), "-w", "w", "put", "-", "cli.txt") })
	door("write", "mcp.txt", func() {
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "feed", Version: "1"}, nil).
			Connect(ctx, &mcp.StreamableClientTransport{Endpoint: mcpURL + "?workspace=w"}, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer cs.Close()
		if text, isErr := mcpCall(t, cs, "write", map[string]any{"path": "mcp.txt", "content": "mcp"}); isErr {
			t.Fatal(text)
		}
	})
	// Before exec, whose materialization would read (and so hydrate) it
	// under its own entry.
	door("mount.hydrate", "host/lazy.md", func() { c.ok(nil, "-w", "w", "cat", "host/lazy.md") })
	door("exec", "exec.txt", func() { c.ok(nil, "-w", "w", "exec", "--", "echo x > exec.txt") })
	door("fuse.", "fuse.txt", func() {
		if err := os.WriteFile(filepath.Join(mnt, "w", "fuse.txt"), []byte("fuse"), 0o644); err != nil {
			t.Fatal(err)
		}
	})
	door("webdav.", "dav.txt", func() {
		req, _ := http.NewRequest("PUT", "http://"+davAddr+"/w/dav.txt", strings.NewReader("dav"))
		resp, err := http.DefaultClient.Do(req)
		if err != nil || resp.StatusCode >= 300 {
			t.Fatalf("WebDAV PUT: %v %v", resp, err)
		}
		resp.Body.Close()
	})
	door("rest.mount.refresh", "host", func() {
		if err := os.WriteFile(filepath.Join(host, "new.md"), []byte("new"), 0o644); err != nil {
			t.Fatal(err)
		}
		c.ok(nil, "-w", "w", "mount", "refresh", "/host")
	})
	door("rest.restore", "", func() { c.ok(nil, "-w", "w", "restore", "start") })
	door("rest.merge", "", func() {
		c.ok([]byte("from the fork"), "-w", "w2", "put", "-", "forked.txt")
		c.ok(nil, "-w", "w", "merge", "w2")
	})

	seen := map[string]bool{}
	var seqs []int64
	var got []string
	for len(seen) < len(want) {
		es, err := s.Next(ctx)
		if err != nil {
			t.Fatalf("after %q: %v (wanted %v)", got, err, want)
		}
		for _, e := range es {
			seqs = append(seqs, e.Seq)
			got = append(got, e.Tool+" "+strings.Join(e.Changed, ","))
			if e.Workspace != "w" {
				t.Errorf("event of another workspace in w's stream: %+v", e)
			}
			for tool, p := range want {
				if strings.HasPrefix(e.Tool, tool) && (p == "" || slices.Contains(e.Changed, p)) {
					seen[tool] = true
				}
			}
		}
	}
	if !slices.IsSorted(seqs) || len(slices.Compact(slices.Clone(seqs))) != len(seqs) {
		t.Errorf("sequence numbers out of order or repeated: %v", seqs)
	}
	t.Logf("w's events:\n%s", strings.Join(got, "\n"))
}
