package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestServeWebDAV: serve --webdav exposes the store's workspaces; a file
// PUT through WebDAV is in the workspace and in the audit log once the
// server stops, and a non-loopback --webdav is refused without --insecure.
func TestServeWebDAV(t *testing.T) {
	c := newCLI(t)
	c.ok(nil, "workspace", "create", "w")
	addr := freeAddr(t)
	_, stop := serve(t, c.store, "--webdav", addr)
	req, _ := http.NewRequest("PUT", "http://"+addr+"/w/notes.txt", strings.NewReader("through webdav"))
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("PUT: %d", resp.StatusCode)
	}
	resp, err = http.Get("http://" + addr + "/w/notes.txt")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "through webdav" {
		t.Fatalf("GET: %q", b)
	}
	stop()
	if got := c.ok(nil, "-w", "w", "cat", "notes.txt"); got != "through webdav" {
		t.Errorf("cat after serve: %q", got)
	}
	if log := c.ok(nil, "-w", "w", "log"); !strings.Contains(log, "webdav.WriteFileFrom") {
		t.Errorf("log: %s", log)
	}
	c.fails(exitUsage, nil, "serve", "--addr", "127.0.0.1:0", "--webdav", "0.0.0.0:0")
}
