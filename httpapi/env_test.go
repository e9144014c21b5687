package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/audit"
	"github.com/forkspace/forkspace/httpapi"
	"github.com/forkspace/forkspace/mount"
	"github.com/forkspace/forkspace/mount/hostmount"
	"github.com/forkspace/forkspace/sandbox"
)

var quiet = slog.New(slog.DiscardHandler)

// seen records the route and status of every response the tests got
// (route "METHOD PATTERN", status), for TestMain's check that every
// status the OpenAPI document lists is reached by some test.
var seen = struct {
	sync.Mutex
	m map[string]bool
}{m: map[string]bool{}}

func observe(method, pattern string, status int) {
	seen.Lock()
	seen.m[fmt.Sprintf("%s %s %d", method, pattern, status)] = true
	seen.Unlock()
}

func TestMain(m *testing.M) {
	flag.Parse()
	code := m.Run()
	if code == 0 && flag.Lookup("test.run").Value.String() == "" && !testing.Short() {
		var missing []string
		for _, rs := range httpapi.DocumentedStatuses() {
			if !seen.m[rs] {
				missing = append(missing, rs)
			}
		}
		if len(missing) > 0 {
			fmt.Fprintf(os.Stderr, "FAIL: no test reached these documented statuses:\n  %s\n", strings.Join(missing, "\n  "))
			code = 1
		}
	}
	os.Exit(code)
}

// env is a store served over HTTP on 127.0.0.1, with the API both ways.
type env struct {
	st     *forkspace.Store
	local  *httpapi.Local
	client *httpapi.Client
	url    string // http://127.0.0.1:PORT
}

func newEnv(t testing.TB) *env {
	return newEnvOpts(t, httpapi.Options{})
}

func newEnvOpts(t testing.TB, o httpapi.Options) *env {
	t.Helper()
	ctx := context.Background()
	drivers := mount.Drivers{"file": hostmount.Driver}
	st, err := forkspace.Open(ctx, forkspace.Options{Dir: t.TempDir(), Logger: quiet, MountDrivers: drivers, OnDelete: sandbox.RemoveWorkDir})
	if err != nil {
		t.Fatal(err)
	}
	local := httpapi.NewLocal(st, httpapi.LocalOptions{
		Audit:        st.AuditLog(),
		MountDrivers: drivers,
		Shell: func(_ context.Context, w *forkspace.Workspace) (httpapi.Shell, error) {
			return sandbox.New(w, sandbox.Options{Audit: st.AuditLog()}), nil
		},
	})
	t.Cleanup(func() { st.Close() })
	url := newServed(t, local, o)
	c, err := httpapi.NewClient(url, httpapi.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return &env{st: st, local: local, client: c, url: url}
}

// both runs fn against the local API and the client of the same store.
func both(t *testing.T, fn func(t *testing.T, e *env, api httpapi.API)) {
	for _, mode := range []string{"local", "client"} {
		t.Run(mode, func(t *testing.T) {
			e := newEnv(t)
			var api httpapi.API = e.local
			if mode == "client" {
				api = e.client
			}
			fn(t, e, api)
		})
	}
}

// do sends a raw request and returns the status, headers and body.
func (e *env) do(t testing.TB, method, path string, body io.Reader, hdr ...string) (int, http.Header, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, e.url+path, body)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var r io.Reader = resp.Body
	if resp.StatusCode == http.StatusOK && strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		r = firstEvent(resp.Body) // an event stream does not end
	}
	data, err := io.ReadAll(r)
	if err != nil {
		t.Fatal(err)
	}
	return resp.StatusCode, resp.Header, data
}

// firstEvent reads an event stream up to the end of its first event (the
// blank line after it).
func firstEvent(r io.Reader) io.Reader {
	var b bytes.Buffer
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		b.WriteString(sc.Text() + "\n")
		if sc.Text() == "" && strings.Contains(b.String(), "event:") {
			break
		}
	}
	return &b
}

// must fails the test on err.
func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// wait polls cond up to a generous bound (not a timed assertion: it only
// stops a hung test).
func wait(t testing.TB, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

var _ = slices.Contains[[]string]

// auditAll selects every audit entry.
var auditAll = audit.Filter{}

// writer returns a function writing a file through api, failing the test
// on an error.
func writer(t *testing.T, api httpapi.API) func(ws, p, body string) {
	return func(ws, p, body string) {
		t.Helper()
		_, err := api.Write(context.Background(), ws, p, strings.NewReader(body), httpapi.WriteRequest{})
		must(t, err)
	}
}
