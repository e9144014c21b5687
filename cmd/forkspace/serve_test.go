package main

import (
	"io"
	"net/http"
	"strings"
	"testing"
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
