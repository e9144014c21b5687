package httpapi_test

import (
	"strings"
	"testing"

	"github.com/forkspace/forkspace/httpapi"
)

// fill replaces a pattern's wildcards: {ws} by ws, {path...} by p,
// {action} by flush.
func fill(pattern, ws, p string) string {
	r := strings.NewReplacer("{ws}", ws, "{path...}", p, "{action}", "flush")
	return r.Replace(pattern)
}

// bodies are valid request bodies per route (so a test reaches what
// follows decoding).
var bodies = map[string]string{
	"POST /v1/workspaces":                      `{"name":"n"}`,
	"POST /v1/workspaces/{ws}/fork":            `{"name":"f"}`,
	"POST /v1/workspaces/{ws}/checkpoints":     `{}`,
	"POST /v1/workspaces/{ws}/restore":         `{"checkpoint":"c"}`,
	"POST /v1/workspaces/{ws}/rename":          `{"from":"a","to":"b"}`,
	"POST /v1/workspaces/{ws}/mkdir":           `{"path":"d"}`,
	"POST /v1/workspaces/{ws}/glob":            `{"pattern":"*"}`,
	"POST /v1/workspaces/{ws}/grep":            `{"pattern":"x"}`,
	"POST /v1/workspaces/{ws}/exec":            `{"command":"true"}`,
	"POST /v1/workspaces/{ws}/mounts/{action}": `{}`,
	"POST /v1/workspaces/{ws}/mounts/resolve":  `{"path":"m/x","keep_local":true}`,
	"POST /v1/workspaces/{ws}/merge":           `{"from":"other"}`,
	"POST /v1/workspaces/{ws}/cherry-pick":     `{"from":"other","paths":["a"]}`,
	"POST /v1/workspaces/{ws}/restore-paths":   `{"checkpoint":"c","paths":["a"]}`,
	"POST /v1/workspaces/{ws}/resolve":         `{"path":"a","take":"ours"}`,
	"POST /v1/workspaces/{ws}/fork-n":          `{"n":2}`,
	"POST /v1/workspaces/{ws}/promote":         `{}`,
	"POST /v1/gc":                              `{"dry_run":true}`,
	"PUT /v1/workspaces/{ws}/files/{path...}":  `data`,
	"POST /v1/workspaces/{ws}/import":          ``,
	"GET /v1/diff":                             ``,
	"POST /v1/tokens":                          `{"perms":"read"}`,
	"PUT /v1/workspaces/{ws}/exec-policy":      `{"network":"full"}`,
}

// TestEveryRoute tries each route with a foreign Origin (403), in a
// missing workspace (404), and for routes taking JSON with a malformed
// (400) and an oversized (413) body.
func TestEveryRoute(t *testing.T) {
	e := newEnv(t)
	st, _, _ := e.do(t, "POST", "/v1/workspaces", strings.NewReader(`{"name":"w"}`))
	if st != 201 {
		t.Fatal(st)
	}
	for _, rt := range httpapi.Routes() {
		method, pattern, _ := strings.Cut(rt, " ")
		key := method + " " + pattern
		if method == "HEAD" {
			key = "GET " + pattern
		}
		u := fill(pattern, "w", "f")
		st, _, _ := e.do(t, method, u, strings.NewReader(bodies[key]), "Origin", "http://evil.example")
		if st != 403 {
			t.Errorf("%s with a foreign Origin: %d", rt, st)
		}
		observe(method, pattern, st) // Guard answers before the server
		if strings.Contains(pattern, "{ws}") {
			st, _, body := e.do(t, method, fill(pattern, "missing", "f"), strings.NewReader(bodies[key]))
			if st != 404 || (method != "HEAD" && apiErr(t, body).Code != "not_found") {
				t.Errorf("%s in a missing workspace: %d %s", rt, st, body)
			}
			st, _, body = e.do(t, method, fill(pattern, "w@", "f"), strings.NewReader(bodies[key]))
			if st != 400 || (method != "HEAD" && apiErr(t, body).Code != "invalid") {
				t.Errorf("%s in a malformed state: %d %s", rt, st, body)
			}
		}
		if b, ok := bodies[key]; ok && strings.HasPrefix(b, "{") {
			st, _, body := e.do(t, method, u, strings.NewReader(`{"nope":1}`))
			if st != 400 || apiErr(t, body).Code != "bad_request" {
				t.Errorf("%s with an unknown field: %d %s", rt, st, body)
			}
			st, _, body = e.do(t, method, u, strings.NewReader(`{"x":"`+strings.Repeat("x", httpapi.MaxJSONBody)+`"}`))
			if st != 413 || apiErr(t, body).Code != "too_large" {
				t.Errorf("%s with an oversized body: %d %s", rt, st, body)
			}
		}
	}
}
