package httpapi_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/forkspace/forkspace/httpapi"
)

// TestGuard sends requests with foreign and own Host and Origin headers to
// a guarded handler on 127.0.0.1: only those addressed to a loopback name
// from no origin or the server's own reach the handler.
func TestGuard(t *testing.T) {
	srv := httptest.NewServer(httpapi.Guard(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, "reached")
	})))
	defer srv.Close()
	own := srv.URL // http://127.0.0.1:PORT
	port := own[strings.LastIndex(own, ":"):]
	tests := []struct {
		name, method, host string
		origin             []string
		ok                 bool
	}{
		{"plain GET", "GET", "", nil, true},
		{"plain POST", "POST", "", nil, true},
		{"own origin", "POST", "", []string{own}, true},
		{"localhost host and origin", "GET", "localhost" + port, []string{"http://localhost" + port}, true},
		{"foreign origin GET", "GET", "", []string{"http://evil.example"}, false},
		{"foreign origin POST", "POST", "", []string{"https://evil.example"}, false},
		{"foreign origin DELETE", "DELETE", "", []string{"http://evil.example"}, false},
		{"null origin", "GET", "", []string{"null"}, false},
		{"other port", "GET", "", []string{"http://127.0.0.1:1"}, false},
		{"other loopback name", "GET", "", []string{"http://localhost" + port}, false},
		{"no scheme", "GET", "", []string{strings.TrimPrefix(own, "http://")}, false},
		{"file scheme", "GET", "", []string{"file://" + strings.TrimPrefix(own, "http://")}, false},
		{"two origins", "GET", "", []string{own, "http://evil.example"}, false},
		{"empty origin", "GET", "", []string{""}, false},
		{"foreign host", "GET", "evil.example", nil, false},
		{"foreign host with port", "GET", "evil.example" + port, nil, false},
		{"foreign host, own-looking origin", "GET", "evil.example", []string{"http://evil.example"}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, srv.URL+"/v1/anything", nil)
			if err != nil {
				t.Fatal(err)
			}
			if tc.host != "" {
				req.Host = tc.host
			}
			for _, o := range tc.origin {
				req.Header.Add("Origin", o)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if tc.ok {
				if resp.StatusCode != 200 || string(body) != "reached" {
					t.Errorf("%d %s, want the handler's answer", resp.StatusCode, body)
				}
				return
			}
			var e struct{ Code, Message string }
			if resp.StatusCode != http.StatusForbidden || json.Unmarshal(body, &e) != nil || e.Code != "forbidden" || e.Message == "" {
				t.Errorf("%d %s, want 403 with a JSON error", resp.StatusCode, body)
			}
		})
	}
}

func TestLoopbackAddr(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:7777": true, "127.1.2.3:0": true, "[::1]:0": true, "localhost:0": true, "[::ffff:127.0.0.1]:1": true,
		"0.0.0.0:7777": false, ":7777": false, "[::]:7777": false, "10.0.0.1:80": false, "[2001:db8::1]:80": false,
	} {
		got, err := httpapi.LoopbackAddr(context.Background(), addr)
		if err != nil || got != want {
			t.Errorf("LoopbackAddr(%q) = %v, %v; want %v", addr, got, err, want)
		}
	}
	if _, err := httpapi.LoopbackAddr(context.Background(), "7777"); err == nil {
		t.Error("LoopbackAddr(7777) accepted an address without a port separator")
	}
}
