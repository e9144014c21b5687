package httpapi_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/audit"
	"github.com/forkspace/forkspace/httpapi"
)

// nextN reads n events from s (failing, not hanging, if they do not
// come within a generous bound).
func nextN(t *testing.T, s httpapi.EventStream, n int) []httpapi.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 2*time.Minute)
	defer cancel()
	var out []httpapi.Event
	for len(out) < n {
		es, err := s.Next(ctx)
		if err != nil {
			t.Fatalf("after %d events: %v", len(out), err)
		}
		out = append(out, es...)
	}
	if len(out) != n {
		t.Fatalf("got %d events, want %d", len(out), n)
	}
	return out
}

func tools(es []httpapi.Event) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Workspace+" "+e.Tool+" "+strings.Join(e.Changed, ","))
	}
	return out
}

// TestEvents: a workspace's stream and the store-wide one, through Local
// and the client: from now, from a sequence number, with workspace names.
func TestEvents(t *testing.T) {
	both(t, func(t *testing.T, e *env, api httpapi.API) {
		ctx := t.Context()
		for _, name := range []string{"a", "b"} {
			_, err := api.CreateWorkspace(ctx, httpapi.CreateRequest{Name: name})
			must(t, err)
		}
		start := e.st.Feed().Last()
		wa, err := api.Events(ctx, "a", "", httpapi.Now)
		must(t, err)
		defer wa.Close()
		all, err := api.Events(ctx, "", "", start)
		must(t, err)
		defer all.Close()
		if wa.Seq() != start || wa.Last() != start {
			t.Errorf("stream from now: Seq %d Last %d, want %d", wa.Seq(), wa.Last(), start)
		}
		_, err = api.Write(ctx, "a", "x.txt", strings.NewReader("x"), httpapi.WriteRequest{})
		must(t, err)
		must(t, api.Mkdir(ctx, "b", "d", false))
		must(t, api.Rename(ctx, "a", "x.txt", "y.txt"))
		got := tools(nextN(t, wa, 2))
		if want := []string{"a rest.write x.txt", "a rest.rename x.txt,y.txt"}; !slices.Equal(got, want) {
			t.Errorf("workspace a: %q, want %q", got, want)
		}
		got = tools(nextN(t, all, 3))
		if want := []string{"a rest.write x.txt", "b rest.mkdir d", "a rest.rename x.txt,y.txt"}; !slices.Equal(got, want) {
			t.Errorf("store-wide: %q, want %q", got, want)
		}
		if all.Seq() != e.st.Feed().Last() {
			t.Errorf("Seq %d after the last event, want %d", all.Seq(), e.st.Feed().Last())
		}
		// The same events again from the start of a's stream.
		again, err := api.Events(ctx, "a", "", start)
		must(t, err)
		defer again.Close()
		if got := tools(nextN(t, again, 2)); got[1] != "a rest.rename x.txt,y.txt" {
			t.Errorf("replay: %q", got)
		}
	})
}

// TestEventsBatchesStay: a batch Next returned stays as it was after
// later calls (the server's streams reuse their buffers; Next's callers
// own what it returns), with each event's workspace name.
func TestEventsBatchesStay(t *testing.T) {
	both(t, func(t *testing.T, e *env, api httpapi.API) {
		ctx := t.Context()
		for _, name := range []string{"a", "b"} {
			_, err := api.CreateWorkspace(ctx, httpapi.CreateRequest{Name: name})
			must(t, err)
		}
		all, err := api.Events(ctx, "", "", httpapi.Now)
		must(t, err)
		defer all.Close()
		var batches [][]httpapi.Event
		var want []string
		for i := range 6 {
			ws := []string{"a", "b"}[i%2]
			name := fmt.Sprintf("f%d", i)
			_, err := api.Write(ctx, ws, name, strings.NewReader("x"), httpapi.WriteRequest{})
			must(t, err)
			want = append(want, ws+" rest.write "+name)
			batches = append(batches, nextN(t, all, 1))
		}
		var got []httpapi.Event
		for _, b := range batches {
			got = append(got, b...)
		}
		if got := tools(got); !slices.Equal(got, want) {
			t.Errorf("batches after the last call: %q, want %q", got, want)
		}
	})
}

// TestEventsTooOld: a start the feed pruned past, or past the newest
// event, is ErrTooOld (410 too_old) on both sides; a malformed one is
// 400.
func TestEventsTooOld(t *testing.T) {
	both(t, func(t *testing.T, e *env, api httpapi.API) {
		ctx := t.Context()
		_, err := api.CreateWorkspace(ctx, httpapi.CreateRequest{Name: "w"})
		must(t, err)
		for i := range 3 {
			_, err = api.Write(ctx, "w", fmt.Sprint(i), strings.NewReader("x"), httpapi.WriteRequest{})
			must(t, err)
		}
		if _, err := e.st.AuditLog().Prune(ctx, time.Now().Add(time.Hour)); err != nil {
			t.Fatal(err)
		}
		last := e.st.Feed().Last()
		for _, since := range []int64{0, last - 1, last + 1} {
			if _, err := api.Events(ctx, "w", "", since); !errors.Is(err, httpapi.ErrTooOld) {
				t.Errorf("Events(since %d) = %v, want ErrTooOld", since, err)
			}
		}
		s, err := api.Events(ctx, "", "", last)
		must(t, err)
		s.Close()
	})
	e := newEnv(t)
	for _, q := range []string{"/v1/events?since=x", "/v1/events?since=-3"} {
		st, _, body := e.do(t, "GET", q, nil)
		if st != 400 || apiErr(t, body).Code != "bad_request" {
			t.Errorf("GET %s: %d %s", q, st, body)
		}
	}
	st, _, body := e.do(t, "GET", "/v1/workspaces/w/events", nil, "Last-Event-ID", "99")
	if st != 404 {
		t.Errorf("events of a missing workspace: %d %s", st, body)
	}
	st, _, body = e.do(t, "GET", "/v1/events", nil, "Last-Event-ID", "99")
	if st != 410 || apiErr(t, body).Code != "too_old" {
		t.Errorf("events after a sequence number past the newest: %d %s", st, body)
	}
	_, err := e.local.CreateWorkspace(t.Context(), httpapi.CreateRequest{Name: "w"})
	must(t, err)
	st, _, body = e.do(t, "GET", "/v1/workspaces/w/events", nil, "Last-Event-ID", "99")
	if st != 410 || apiErr(t, body).Code != "too_old" {
		t.Errorf("a workspace's events after a sequence number past the newest: %d %s", st, body)
	}
}

// streamGet returns the status of a GET of an event stream and, unless
// it is 200 (a stream that never ends), the body.
func streamGet(t *testing.T, url string) (int, []byte) {
	t.Helper()
	resp, err := http.Get(url)
	must(t, err)
	defer resp.Body.Close()
	var body []byte
	if resp.StatusCode != http.StatusOK {
		body, err = io.ReadAll(resp.Body)
		must(t, err)
	}
	return resp.StatusCode, body
}

// sseLines reads a raw event stream line by line.
func sseLines(t *testing.T, url string, hdr ...string) (*bufio.Scanner, func()) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), "GET", url, nil)
	must(t, err)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	must(t, err)
	if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "text/event-stream" {
		t.Fatalf("GET %s: %s %s", url, resp.Status, resp.Header.Get("Content-Type"))
	}
	return bufio.NewScanner(resp.Body), func() { resp.Body.Close() }
}

// TestEventsWire: the stream as an EventSource sees it: retry, the ready
// event with the start as its id, change events with their Seq as id and
// the entry as data, heartbeat comments while idle; Last-Event-ID wins
// over ?since=.
func TestEventsWire(t *testing.T) {
	e := newEnvOpts(t, httpapi.Options{Heartbeat: 10 * time.Millisecond})
	ctx := t.Context()
	_, err := e.local.CreateWorkspace(ctx, httpapi.CreateRequest{Name: "w"})
	must(t, err)
	start := e.st.Feed().Last()
	must(t, e.local.Mkdir(ctx, "w", "d1", false))
	must(t, e.local.Mkdir(ctx, "w", "d2", false))
	sc, stop := sseLines(t, e.url+"/v1/workspaces/w/events?since=0", "Last-Event-ID", strconv.FormatInt(start, 10))
	defer stop()
	var lines []string
	heartbeats := 0
	for sc.Scan() && heartbeats < 2 {
		l := sc.Text()
		if l == ": heartbeat" {
			heartbeats++
			continue
		}
		lines = append(lines, l)
	}
	want := []string{
		"retry: 1000", fmt.Sprintf("id: %d", start), "event: ready", fmt.Sprintf(`data: {"seq":%d,"last":%d}`, start, start+2), "",
		fmt.Sprintf("id: %d", start+1), "event: change",
	}
	if len(lines) < len(want) || !slices.Equal(lines[:len(want)], want) {
		t.Fatalf("stream:\n%s", strings.Join(lines, "\n"))
	}
	if d := lines[len(want)]; !strings.Contains(d, `"tool":"rest.mkdir"`) || !strings.Contains(d, `"changed":["d1"]`) || !strings.Contains(d, `"workspace":"w"`) {
		t.Errorf("data of the first change: %s", d)
	}
	if !slices.Contains(lines, fmt.Sprintf("id: %d", start+2)) {
		t.Errorf("no second change:\n%s", strings.Join(lines, "\n"))
	}
}

// TestEventsAfterRestart: a client's stream that loses the server, which
// restarts on the same address over the same store after more changes
// (made by another process meanwhile: here the library), reconnects by
// itself with Last-Event-ID and receives exactly the events it missed,
// in order, then live ones.
func TestEventsAfterRestart(t *testing.T) {
	dir := t.TempDir()
	ctx := t.Context()
	addr := ""
	serve := func() (*forkspace.Store, func()) {
		st, err := forkspace.Open(ctx, forkspace.Options{Dir: dir, Logger: quiet})
		must(t, err)
		local := httpapi.NewLocal(st, httpapi.LocalOptions{Audit: st.AuditLog()})
		ln, err := net.Listen("tcp", cmpOr(addr, "127.0.0.1:0"))
		must(t, err)
		addr = ln.Addr().String()
		srv := httpapi.HTTPServer(httpapi.Guard(httpapi.NewServer(httpapi.Options{API: local, Logger: quiet, Observe: observe}).Handler()))
		go srv.Serve(ln)
		return st, func() {
			srv.Close()
			st.Close()
		}
	}
	st, stop := serve()
	w, err := st.Create(ctx, "w", forkspace.CreateOptions{})
	must(t, err)
	c, err := httpapi.NewClient("http://"+addr, httpapi.ClientOptions{})
	must(t, err)
	s, err := c.Events(ctx, "w", "", httpapi.Now)
	must(t, err)
	defer s.Close()
	must(t, w.WriteFile(ctx, "before", nil, 0o644))
	first := nextN(t, s, 1)
	stop()

	// The server is gone; the store changes without it.
	st, err = forkspace.Open(ctx, forkspace.Options{Dir: dir, Logger: quiet})
	must(t, err)
	w, err = st.Workspace(ctx, "w")
	must(t, err)
	for _, p := range []string{"missed-1", "missed-2"} {
		// Alike changes pending together are one entry; an actor each
		// keeps them two.
		must(t, w.WriteFile(audit.WithActor(ctx, audit.Actor{Name: p}), p, nil, 0o644))
	}
	must(t, st.Close())

	st, stop = serve()
	defer stop()
	w, err = st.Workspace(ctx, "w")
	must(t, err)
	must(t, w.WriteFile(ctx, "after", nil, 0o644))
	got := nextN(t, s, 3)
	if want := []string{"w library.write missed-1", "w library.write missed-2", "w library.write after"}; !slices.Equal(tools(got), want) {
		t.Errorf("after the restart: %q, want %q", tools(got), want)
	}
	for i, ev := range got {
		prev := first[0].Seq
		if i > 0 {
			prev = got[i-1].Seq
		}
		if ev.Seq <= prev {
			t.Errorf("event %d: Seq %d after %d", i, ev.Seq, prev)
		}
	}
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// TestEventsSlowReaders: connections that do not read their stream hold
// nothing up: a subscriber that reads receives every one of many events
// while they are written. (Were the writers or it blocked, the test
// would hang.) The workspace's streams that were not read, whose socket
// buffers filled while the shared writers wrote (feeddirect.go), then
// hold every event in order when they are read.
func TestEventsSlowReaders(t *testing.T) {
	e := newEnv(t)
	ctx := t.Context()
	// The server's send buffers are small, so the unread streams fill up
	// within a few events and the shared writers hand them over.
	srv := httptest.NewUnstartedServer(httpapi.Guard(httpapi.NewServer(httpapi.Options{API: e.local, Logger: quiet}).Handler()))
	srv.Config = httpapi.HTTPServer(srv.Config.Handler)
	srv.Listener = smallSends{srv.Listener}
	srv.Start()
	defer srv.Close()
	e.url = srv.URL
	_, err := e.local.CreateWorkspace(ctx, httpapi.CreateRequest{Name: "w"})
	must(t, err)
	var slow []*bufio.Scanner
	for i := range 20 {
		u := e.url + "/v1/events?since=0"
		if i%2 == 1 {
			u = e.url + "/v1/workspaces/w/events"
		}
		sc, stop := sseLines(t, u)
		defer stop()
		if i%2 == 1 {
			slow = append(slow, sc)
		}
	}
	s, err := e.client.Events(ctx, "w", "", httpapi.Now)
	must(t, err)
	defer s.Close()
	const n = 500
	done := make(chan error, 1)
	go func() {
		long := strings.Repeat("x", 200) // long paths fill the slow connections' buffers sooner
		for i := range n {
			if _, err := e.local.Write(context.Background(), "w", fmt.Sprintf("f%d-%s", i, long), strings.NewReader("x"), httpapi.WriteRequest{}); err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	got := nextN(t, s, n)
	must(t, <-done)
	if !strings.HasPrefix(got[n-1].Changed[0], fmt.Sprintf("f%d-", n-1)) {
		t.Errorf("last event %+v", got[n-1])
	}
	var want []string
	for _, ev := range got {
		want = append(want, strconv.FormatInt(ev.Seq, 10))
	}
	for i, sc := range slow {
		if ids := changeIDs(sc, n); !slices.Equal(ids, want) {
			t.Errorf("slow stream %d: %d change events, want %d in order", i, len(ids), n)
		}
	}
}

// smallSends gives each connection it accepts an 8 KiB send buffer.
type smallSends struct{ net.Listener }

func (l smallSends) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if tc, ok := c.(*net.TCPConn); ok {
		tc.SetWriteBuffer(8 << 10)
	}
	return c, err
}

// changeIDs reads the ids of the next n change events of a raw stream.
func changeIDs(sc *bufio.Scanner, n int) []string {
	var ids []string
	id := ""
	for len(ids) < n && sc.Scan() {
		switch l := sc.Text(); {
		case strings.HasPrefix(l, "id: "):
			id = strings.TrimPrefix(l, "id: ")
		case l == "event: change":
			ids = append(ids, id)
		}
	}
	return ids
}
