package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/forkspace/forkspace/httpapi"
	"github.com/forkspace/forkspace/provider"
)

// apiErr decodes the JSON error shape.
func apiErr(t testing.TB, body []byte) httpapi.Error {
	t.Helper()
	var e httpapi.Error
	if err := json.Unmarshal(body, &e); err != nil || e.Code == "" || e.Message == "" {
		t.Fatalf("not the JSON error shape: %s", body)
	}
	return e
}

// TestFilesHTTP drives downloads and uploads with raw HTTP: ranges,
// validators, conditional writes.
func TestFilesHTTP(t *testing.T) {
	e := newEnv(t)
	const f = "/v1/workspaces/w/files/dir/data.bin"
	st, _, body := e.do(t, "POST", "/v1/workspaces", strings.NewReader(`{"name":"w"}`))
	if st != 201 {
		t.Fatalf("create: %d %s", st, body)
	}
	st, _, body = e.do(t, "POST", "/v1/workspaces/w/mkdir", strings.NewReader(`{"path":"dir"}`))
	if st != 204 {
		t.Fatalf("mkdir: %d %s", st, body)
	}
	data := bytes.Repeat([]byte("0123456789"), 10_000)
	st, h, body := e.do(t, "PUT", f+"?mode=0600", bytes.NewReader(data), "If-None-Match", "*")
	if st != 200 || h.Get("ETag") == "" {
		t.Fatalf("upload: %d %s", st, body)
	}
	etag := h.Get("ETag")
	var ent httpapi.Entry
	json.Unmarshal(body, &ent)
	if ent.Size != int64(len(data)) || ent.Mode != "0600" || ent.ETag != etag {
		t.Errorf("upload entry %+v", ent)
	}
	// Whole, ranges, suffix, open-ended.
	st, h, body = e.do(t, "GET", f, nil)
	if st != 200 || !bytes.Equal(body, data) || h.Get("ETag") != etag || h.Get("Accept-Ranges") != "bytes" {
		t.Errorf("download: %d, %d bytes, %v", st, len(body), h)
	}
	for rg, want := range map[string]string{"bytes=10-19": "0123456789", "bytes=-3": "789", "bytes=99995-": "56789"} {
		st, h, body = e.do(t, "GET", f, nil, "Range", rg)
		if st != 206 || string(body) != want || !strings.HasSuffix(h.Get("Content-Range"), "/100000") {
			t.Errorf("Range %s: %d %q %v", rg, st, body, h.Get("Content-Range"))
		}
	}
	st, _, body = e.do(t, "GET", f, nil, "Range", "bytes=100000-")
	if st != 416 || apiErr(t, body).Code != "range_not_satisfiable" {
		t.Errorf("Range beyond the end: %d %s", st, body)
	}
	st, _, body = e.do(t, "GET", f, nil, "Range", "bytes=0-1,5-6")
	if st != 200 || len(body) != len(data) {
		t.Errorf("multiple ranges (served whole): %d %d bytes", st, len(body))
	}
	st, _, body = e.do(t, "GET", f, nil, "Range", "bytes=0-9", "If-Range", `"other"`)
	if st != 200 || len(body) != len(data) {
		t.Errorf("If-Range with another ETag: %d", st)
	}
	st, _, _ = e.do(t, "GET", f, nil, "If-None-Match", etag)
	if st != 304 {
		t.Errorf("If-None-Match: %d", st)
	}
	st, h, body = e.do(t, "HEAD", f, nil)
	if st != 200 || len(body) != 0 || h.Get("Content-Length") != "100000" {
		t.Errorf("HEAD: %d %v", st, h)
	}
	// Conditional uploads: a stale ETag or create-only over a file is 412
	// and writes nothing.
	st, _, body = e.do(t, "PUT", f, strings.NewReader("clobber"), "If-Match", `"stale"`)
	if st != 412 || apiErr(t, body).Code != "precondition_failed" {
		t.Errorf("If-Match mismatch: %d %s", st, body)
	}
	st, _, body = e.do(t, "PUT", f, strings.NewReader("clobber"), "If-None-Match", "*")
	if st != 412 {
		t.Errorf("If-None-Match * over a file: %d %s", st, body)
	}
	st, _, body = e.do(t, "PUT", f, strings.NewReader("x"), "If-None-Match", `"abc"`)
	if st != 400 {
		t.Errorf("If-None-Match with an ETag on PUT: %d %s", st, body)
	}
	st, _, body = e.do(t, "PUT", f+"?mode=999", strings.NewReader("x"))
	if st != 400 {
		t.Errorf("bad mode: %d %s", st, body)
	}
	if _, _, body = e.do(t, "GET", f, nil); !bytes.Equal(body, data) {
		t.Error("a refused upload changed the file")
	}
	st, _, _ = e.do(t, "PUT", f, strings.NewReader("new"), "If-Match", etag)
	if st != 200 {
		t.Errorf("If-Match with the current ETag: %d", st)
	}
	// Errors of the file routes.
	st, _, body = e.do(t, "GET", "/v1/workspaces/w/files/missing", nil)
	if e := apiErr(t, body); st != 404 || e.Code != "not_found" || e.Path != "missing" {
		t.Errorf("missing file: %d %+v", st, e)
	}
	st, _, body = e.do(t, "GET", "/v1/workspaces/w/stat/dir", nil)
	if st != 200 {
		t.Errorf("stat: %d %s", st, body)
	}
	st, _, body = e.do(t, "GET", "/v1/workspaces/w/files/dir", nil)
	if st != 400 || apiErr(t, body).Code != "is_dir" {
		t.Errorf("download of a directory: %d %s", st, body)
	}
	st, _, body = e.do(t, "DELETE", "/v1/workspaces/w/files/dir", nil)
	if st != 409 || apiErr(t, body).Code != "not_empty" {
		t.Errorf("rm of a full directory: %d %s", st, body)
	}
	st, _, _ = e.do(t, "DELETE", "/v1/workspaces/w/files/dir?recursive=true", nil)
	if st != 204 {
		t.Errorf("rm -r: %d", st)
	}
	// Escapes, raw and encoded, never reach a route.
	for _, p := range []string{"/v1/workspaces/w/files/../../etc/passwd", "/v1/workspaces/w/files/%2e%2e/x", "/v1/workspaces/w/stat/a/..%2f..%2fb"} {
		req, _ := http.NewRequest("GET", e.url, nil)
		req.URL.Opaque = p
		resp, err := http.DefaultClient.Do(req)
		must(t, err)
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 400 || apiErr(t, body).Code != "invalid" {
			t.Errorf("%s: %d %s", p, resp.StatusCode, body)
		}
	}
}

// TestUploadCutOff sends half of an upload's declared length and hangs
// up: nothing of it is visible, and the file it was replacing is intact.
func TestUploadCutOff(t *testing.T) {
	e := newEnv(t)
	ctx := context.Background()
	_, err := e.client.CreateWorkspace(ctx, httpapi.CreateRequest{Name: "w"})
	must(t, err)
	_, err = e.client.Write(ctx, "w", "keep.txt", strings.NewReader("old contents"), httpapi.WriteRequest{})
	must(t, err)
	before, _ := e.client.Stat(ctx, "w", ".")
	for _, p := range []string{"keep.txt", "new.bin"} {
		conn, err := net.Dial("tcp", strings.TrimPrefix(e.url, "http://"))
		must(t, err)
		fmt.Fprintf(conn, "PUT /v1/workspaces/w/files/%s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n\r\n", p, strings.TrimPrefix(e.url, "http://"), 4<<20)
		conn.Write(bytes.Repeat([]byte("x"), 2<<20))
		conn.Close()
	}
	// The server notices the hang-up and gives up; then nothing changed.
	wait(t, "the cut uploads to end", func() bool {
		es, _ := e.client.Audit(ctx, "w", auditAll)
		n := 0
		for _, en := range es {
			if en.Tool == "rest.write" && en.Error != "" {
				n++
			}
		}
		return n == 2
	})
	d, err := e.client.Open(ctx, "w", "keep.txt", httpapi.ReadRequest{Length: -1})
	must(t, err)
	got, _ := io.ReadAll(d)
	d.Close()
	if string(got) != "old contents" {
		t.Errorf("keep.txt after a cut upload: %q", got)
	}
	if _, err := e.client.Stat(ctx, "w", "new.bin"); err == nil {
		t.Error("new.bin exists after a cut upload")
	}
	after, _ := e.client.Stat(ctx, "w", ".")
	if after.Mtime != before.Mtime {
		t.Error("the root changed")
	}
}

// TestSlowReader: a client that stops reading a large download holds
// nothing others need: stats, reads and a write of the same file go on,
// and the stalled connection is dropped after the idle bound.
func TestSlowReader(t *testing.T) {
	var cut atomic.Bool
	log := slog.New(handlerFunc(func(r slog.Record) {
		if r.Message == "response cut" {
			cut.Store(true)
		}
	}))
	e := newEnvOpts(t, httpapi.Options{BodyIdle: 300 * time.Millisecond, Logger: log})
	ctx := context.Background()
	_, err := e.client.CreateWorkspace(ctx, httpapi.CreateRequest{Name: "w"})
	must(t, err)
	big := bytes.Repeat([]byte("z"), 64<<20)
	_, err = e.client.Write(ctx, "w", "big", bytes.NewReader(big), httpapi.WriteRequest{})
	must(t, err)
	// A small receive window from the start (set before connecting), so
	// the kernel cannot absorb the download for the stalled reader.
	d := net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		return c.Control(func(fd uintptr) { syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096) })
	}}
	conn, err := d.Dial("tcp", strings.TrimPrefix(e.url, "http://"))
	must(t, err)
	defer conn.Close()
	fmt.Fprintf(conn, "GET /v1/workspaces/w/files/big HTTP/1.1\r\nHost: %s\r\n\r\n", strings.TrimPrefix(e.url, "http://"))
	br := bufio.NewReader(conn)
	defer conn.(*net.TCPConn).SetLinger(0)
	line, err := br.ReadString('\n')
	if err != nil || !strings.Contains(line, "200") {
		t.Fatalf("download: %q %v", line, err)
	}
	// The stalled download is in flight; everything else proceeds.
	for i := range 20 {
		if _, err := e.client.Stat(ctx, "w", "big"); err != nil {
			t.Fatal(err)
		}
		if _, err := e.client.Write(ctx, "w", "small", strings.NewReader(fmt.Sprint("v", i)), httpapi.WriteRequest{}); err != nil {
			t.Fatal(err)
		}
		if _, err := e.client.ListWorkspaces(ctx, httpapi.PageRequest{}); err != nil {
			t.Fatal(err)
		}
	}
	// The server gives up on the stalled download (and closes the
	// connection; the kernel may keep trying to deliver what it buffered).
	wait(t, "the stalled download to be cut", func() bool { return cut.Load() })
}

// TestDownloadDuringRewrite: a file replaced while it is downloaded never
// yields a mix of both versions: the download is whole and old, or fails.
func TestDownloadDuringRewrite(t *testing.T) {
	both(t, func(t *testing.T, e *env, api httpapi.API) {
		ctx := context.Background()
		_, err := api.CreateWorkspace(ctx, httpapi.CreateRequest{Name: "w"})
		must(t, err)
		_, err = api.Write(ctx, "w", "f", bytes.NewReader(bytes.Repeat([]byte("a"), 16<<20)), httpapi.WriteRequest{})
		must(t, err)
		d, err := api.Open(ctx, "w", "f", httpapi.ReadRequest{Length: -1})
		must(t, err)
		defer d.Close()
		head := make([]byte, 1<<20)
		_, err = io.ReadFull(d, head)
		must(t, err)
		_, err = api.Write(ctx, "w", "f", bytes.NewReader(bytes.Repeat([]byte("b"), 16<<20)), httpapi.WriteRequest{})
		must(t, err)
		rest, err := io.ReadAll(d)
		if bytes.IndexByte(rest, 'b') >= 0 || bytes.IndexByte(head, 'b') >= 0 {
			t.Fatal("the download mixed two versions")
		}
		if err == nil && len(head)+len(rest) != 16<<20 {
			t.Fatalf("the download ended short (%d bytes) without an error", len(head)+len(rest))
		}
	})
}

// TestExecStream runs a command through the API in the real sandbox: its
// output streams, its result and changes come back.
func TestExecStream(t *testing.T) {
	both(t, func(t *testing.T, e *env, api httpapi.API) {
		ctx := context.Background()
		_, err := api.CreateWorkspace(ctx, httpapi.CreateRequest{Name: "w"})
		must(t, err)
		var out, errb bytes.Buffer
		res, err := api.Exec(ctx, "w", provider.ExecRequest{Command: "echo out; echo err >&2; echo made > f.txt; exit 3"}, &out, &errb)
		if err != nil {
			t.Fatal(err)
		}
		if out.String() != "out\n" || errb.String() != "err\n" || res.ExitCode != 3 || !res.PulledBack {
			t.Errorf("exec: %q %q %+v", out.String(), errb.String(), res)
		}
		if _, err := api.Stat(ctx, "w", "f.txt"); err != nil {
			t.Errorf("pulled back: %v", err)
		}
		if _, err := api.Exec(ctx, "nope", provider.ExecRequest{Command: "true"}, nil, nil); err == nil {
			t.Error("exec in a missing workspace")
		}
	})
}

// TestBadRequests: malformed JSON, unknown fields, oversized bodies, bad
// parameters and unknown routes get the JSON error shape and change
// nothing.
func TestBadRequests(t *testing.T) {
	e := newEnv(t)
	for _, tc := range []struct {
		method, path, body string
		status             int
		code               string
	}{
		{"POST", "/v1/workspaces", `{"name":`, 400, "bad_request"},
		{"POST", "/v1/workspaces", `{"name":"x","colour":"red"}`, 400, "bad_request"},
		{"POST", "/v1/workspaces", `{"name":"x"} {"name":"y"}`, 400, "bad_request"},
		{"POST", "/v1/workspaces", `[]`, 400, "bad_request"},
		{"POST", "/v1/workspaces", `{"name":"` + strings.Repeat("x", 2<<20) + `"}`, 413, "too_large"},
		{"GET", "/v1/workspaces?limit=-1", "", 400, "bad_request"},
		{"GET", "/v1/workspaces?limit=ten", "", 400, "bad_request"},
		{"GET", "/v1/workspaces?cursor=%25%25", "", 400, "bad_request"},
		{"GET", "/v1/diff?from=a", "", 400, "bad_request"},
		{"GET", "/v1/audit?limit=x", "", 400, "bad_request"},
		{"GET", "/v1/nothing", "", 404, "no_route"},
		{"PATCH", "/v1/workspaces", "", 404, "no_route"},
	} {
		st, _, body := e.do(t, tc.method, tc.path, strings.NewReader(tc.body))
		if st != tc.status || apiErr(t, body).Code != tc.code {
			t.Errorf("%s %s %.40s: %d %s, want %d %s", tc.method, tc.path, tc.body, st, body, tc.status, tc.code)
		}
	}
	if p, _ := e.client.ListWorkspaces(context.Background(), httpapi.PageRequest{}); len(p.Workspaces) != 0 {
		t.Errorf("bad requests created %+v", p.Workspaces)
	}
}

// TestOpenAPI checks the document against the server: it is valid JSON
// of OpenAPI 3.1, every operation in it is served (never "no route"), and
// every route the server registers is in it.
func TestOpenAPI(t *testing.T) {
	e := newEnv(t)
	st, _, body := e.do(t, "GET", "/v1/openapi.json", nil)
	if st != 200 {
		t.Fatalf("openapi.json: %d", st)
	}
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	must(t, json.Unmarshal(body, &doc))
	if doc.OpenAPI != "3.1.0" {
		t.Errorf("openapi %q", doc.OpenAPI)
	}
	param := regexp.MustCompile(`\{(\w+)\}`)
	ops := 0
	for p, methods := range doc.Paths {
		for m := range methods {
			ops++
			u := param.ReplaceAllStringFunc(p, func(s string) string {
				if s == "{action}" {
					return "flush"
				}
				return "x"
			})
			if strings.HasSuffix(p, "/events") {
				// An event stream never ends: its status is enough.
				if st, body := streamGet(t, e.url+u); st == 404 && apiErr(t, body).Code == "no_route" {
					t.Errorf("%s %s is documented but not served", m, p)
				}
				continue
			}
			st, _, body := e.do(t, strings.ToUpper(m), u, nil)
			if m != "head" && st == 404 && apiErr(t, body).Code == "no_route" {
				t.Errorf("%s %s is documented but not served", m, p)
			}
		}
	}
	if want := len(httpapi.Routes()); ops != want {
		t.Errorf("the document has %d operations, the server %d routes", ops, want)
	}
}

// handlerFunc is a slog handler calling a function with each record.
type handlerFunc func(slog.Record)

func (h handlerFunc) Enabled(context.Context, slog.Level) bool      { return true }
func (h handlerFunc) Handle(_ context.Context, r slog.Record) error { h(r); return nil }
func (h handlerFunc) WithAttrs([]slog.Attr) slog.Handler            { return h }
func (h handlerFunc) WithGroup(string) slog.Handler                 { return h }
