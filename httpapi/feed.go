package httpapi

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/forkspace/forkspace/audit"
	"github.com/forkspace/forkspace/auth"
	"github.com/forkspace/forkspace/feed"
	"github.com/forkspace/forkspace/vfs"
)

// The change feed over HTTP: Server-Sent Events per workspace and
// store-wide (docs/decisions/017-change-feed.md).

// Event is one change of the feed: an audit entry (its Seq is the SSE
// id) and the name of its workspace ("" when the workspace is gone or the
// entry is store-wide).
type Event struct {
	audit.Entry
	Workspace string `json:"workspace,omitempty"`
}

// EventReady is the data of the first event of a stream ("ready"): the
// sequence number the stream starts after (its SSE id, so a reconnecting
// EventSource resumes there) and the newest one of the store.
type EventReady struct {
	Seq  int64 `json:"seq"`
	Last int64 `json:"last"`
}

// Now, as the since of Events, starts a stream at the newest event.
const Now = -1

// EventStream is a subscription to the change feed.
type EventStream interface {
	// Next returns the next events in Seq order, waiting until there are
	// some or ctx is done (its error then). ErrTooOld (feed.ErrTooOld)
	// means the feed cannot continue from Seq: list again and subscribe
	// anew.
	Next(ctx context.Context) ([]Event, error)
	// Seq is the sequence number of the last event the stream went past.
	Seq() int64
	// Last is the store's newest sequence number when the stream started.
	Last() int64
	Close() error
}

// ErrTooOld is the feed's: a subscription from a sequence number it
// cannot continue from (HTTP 410, code too_old).
var ErrTooOld = feed.ErrTooOld

// DefaultHeartbeat is how often an event stream sends a comment, so
// proxies and the server's idle write bound keep an idle connection.
const DefaultHeartbeat = 15 * time.Second

// feedRoutes are the table entries of the change feed.
func feedRoutes() []route {
	params := []param{
		{"since", "query", "integer", "start after this sequence number (0: the start of the log; absent: now)"},
		{"path", "query", "string", "only changes that touch this workspace path (it, beneath it, or a directory above it)"},
		{"Last-Event-ID", "header", "string", "as since; sent by a reconnecting EventSource, it wins over since"},
	}
	return []route{
		{method: "GET", pattern: "/v1/workspaces/{ws}/events", op: "workspaceEvents", need: needRead, summary: "The workspace's changes as Server-Sent Events (ready first, then change events with the sequence number as id; heartbeat comments)",
			params: params, out: typeOf[Event](), rawOut: "text/event-stream", ok: 200, errs: []int{410}, handle: (*Server).workspaceEvents},
		{method: "GET", pattern: "/v1/events", op: "events", need: needRead, summary: "Every workspace's changes as Server-Sent Events",
			params: params, out: typeOf[Event](), rawOut: "text/event-stream", ok: 200, errs: []int{400, 410}, handle: (*Server).events},
	}
}

// eventsSince reads the start of a stream: Last-Event-ID, else ?since=,
// else Now.
func eventsSince(r *http.Request) (int64, error) {
	v, name := r.Header.Get("Last-Event-ID"), "Last-Event-ID"
	if v == "" {
		v, name = r.URL.Query().Get("since"), "since"
	}
	if v == "" {
		return Now, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s=%s: %w: want a sequence number (0 or more)", name, quoteShort(v), ErrBadRequest)
	}
	return n, nil
}

func (s *Server) workspaceEvents(w http.ResponseWriter, r *http.Request) error {
	return s.stream(w, r, r.PathValue("ws"))
}

func (s *Server) events(w http.ResponseWriter, r *http.Request) error {
	return s.stream(w, r, "")
}

// stream serves the events of ws ("" all) until the client goes.
func (s *Server) stream(w http.ResponseWriter, r *http.Request, ws string) error {
	since, err := eventsSince(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	es, err := s.opts.API.Events(ctx, ws, r.URL.Query().Get("path"), since)
	if err != nil {
		return err
	}
	defer es.Close()
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Accel-Buffering", "no")
	w.WriteHeader(http.StatusOK)
	ready, _ := json.Marshal(EventReady{Seq: es.Seq(), Last: es.Last()})
	fmt.Fprintf(w, "retry: 1000\nid: %d\nevent: ready\ndata: %s\n\n", es.Seq(), ready)
	rc := http.NewResponseController(w)
	if err := rc.Flush(); err != nil {
		return nil // the client went
	}
	if d := s.direct(r, es); d != nil {
		return s.streamDirect(ctx, d)
	}
	for {
		// One deadline per heartbeat, not per wait: a stream of a
		// thousand subscribers wakes a thousand waits per event.
		wait, cancel := context.WithTimeout(ctx, s.opts.Heartbeat)
		err := s.send(wait, w, rc, es)
		cancel()
		switch {
		case ctx.Err() != nil || errors.Is(err, errClientGone):
			return nil
		case errors.Is(err, context.DeadlineExceeded):
			if _, err := w.Write(heartbeat); err != nil {
				return nil
			}
		default:
			// The stream has begun: the error is its last event.
			w.Write(errorFrame(err))
			return nil
		}
		if err := rc.Flush(); err != nil {
			return nil // the client went
		}
	}
}

// heartbeat is the comment an idle stream sends.
var heartbeat = []byte(": heartbeat\n\n")

// errorFrame is the last event of a stream that failed.
func errorFrame(err error) []byte {
	code, _ := classify(err)
	data, _ := json.Marshal(apiError{Code: code, Message: err.Error()})
	return fmt.Appendf(nil, "event: error\ndata: %s\n\n", data)
}

// errClientGone stops a stream whose client went.
var errClientGone = errors.New("the client went")

// send writes the events of es as they come until ctx is done or a read
// fails (its error).
func (s *Server) send(ctx context.Context, w http.ResponseWriter, rc *http.ResponseController, es EventStream) error {
	as, _ := es.(appendStream)
	var batch []Event
	for {
		var err error
		if as != nil {
			clear(batch)
			batch, err = as.appendNext(ctx, batch[:0])
		} else {
			batch, err = es.Next(ctx)
		}
		if err != nil {
			return err
		}
		for _, e := range batch {
			frame, err := s.frames.of(e)
			if err != nil {
				return err
			}
			if _, err := w.Write(frame); err != nil {
				return errClientGone
			}
		}
		if err := rc.Flush(); err != nil {
			return errClientGone
		}
	}
}

// frames shares the encoding of recent events between the streams that
// send them: each of a thousand subscribers would otherwise encode the
// same event. Slots are chosen by sequence number and read without a
// lock (a thousand streams wake at once for each event); a miss encodes
// again.
type frames struct {
	slot [64]atomic.Pointer[frame]
}

// frame is the Server-Sent Events frame of one event as a stream sends
// it. Entries of one sequence number are one audit entry; the workspace
// name is the stream's view of it.
type frame struct {
	seq     int64
	ws      string
	b       []byte
	chunked []byte // b as one chunk of an HTTP/1.1 chunked body
}

// of returns the frame of e: "id: SEQ\nevent: change\ndata: JSON\n\n".
func (f *frames) of(e Event) ([]byte, error) {
	fr, err := f.frame(e)
	if err != nil {
		return nil, err
	}
	return fr.b, nil
}

// chunked returns the frame of e as one chunk of a chunked body.
func (f *frames) chunked(e Event) ([]byte, error) {
	fr, err := f.frame(e)
	if err != nil {
		return nil, err
	}
	return fr.chunked, nil
}

func (f *frames) frame(e Event) (*frame, error) {
	slot := &f.slot[uint64(e.Seq)%uint64(len(f.slot))]
	if fr := slot.Load(); fr != nil && fr.seq == e.Seq && fr.ws == e.Workspace {
		return fr, nil
	}
	data, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	b := fmt.Appendf(nil, "id: %d\nevent: change\ndata: %s\n\n", e.Seq, data)
	fr := &frame{seq: e.Seq, ws: e.Workspace, b: b, chunked: chunk(nil, b)}
	slot.Store(fr)
	return fr, nil
}

// chunk appends b to dst as one chunk of an HTTP/1.1 chunked body.
func chunk(dst, b []byte) []byte {
	dst = strconv.AppendInt(dst, int64(len(b)), 16)
	dst = append(dst, "\r\n"...)
	dst = append(dst, b...)
	return append(dst, "\r\n"...)
}

// localStream is Local's EventStream: a feed cursor, with workspace names.
type localStream struct {
	f      *feed.Feed
	c      *feed.Cursor
	wsID   string // the workspace of a workspace's stream ("" store-wide)
	last   int64
	finite bool // LocalOptions.FiniteEvents
	names  *workspaceNames
	buf    []feed.Event // the cursor's, reused by each call
}

func (s *localStream) Seq() int64   { return s.c.Seq() }
func (s *localStream) Last() int64  { return s.last }
func (s *localStream) Close() error { return nil }

func (s *localStream) Next(ctx context.Context) ([]Event, error) {
	return s.appendNext(ctx, nil)
}

// appendStream is an EventStream that appends its next events to a
// buffer its reader reuses (the server's streams: a thousand subscribers
// would each allocate a batch per event).
type appendStream interface {
	appendNext(ctx context.Context, dst []Event) ([]Event, error)
}

var _ appendStream = (*localStream)(nil)

// appendNext is Next appending to dst.
func (s *localStream) appendNext(ctx context.Context, dst []Event) ([]Event, error) {
	for {
		es, wake, err := s.poll(ctx, dst)
		if err != nil || len(es) > len(dst) {
			return es, err
		}
		if s.finite && s.c.Seq() >= s.last {
			return dst, io.EOF
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return dst, ctx.Err()
		}
	}
}

// poll appends the events there are now to dst, without waiting; when
// there are none, wake is closed once there may be more.
func (s *localStream) poll(ctx context.Context, dst []Event) (_ []Event, wake <-chan struct{}, err error) {
	s.buf, wake, err = s.c.PollAppend(ctx, s.buf[:0])
	return s.named(ctx, dst), wake, err
}

// ready appends the events the feed holds in memory to dst; false when
// the stream has fallen behind them and only poll (reading the log) can
// go on.
func (s *localStream) ready(ctx context.Context, dst []Event) ([]Event, bool) {
	var ok bool
	s.buf, ok = s.c.PollReady(s.buf[:0])
	return s.named(ctx, dst), ok
}

// named appends the cursor's events in s.buf to dst with their
// workspace names.
func (s *localStream) named(ctx context.Context, dst []Event) []Event {
	for _, e := range s.buf {
		dst = append(dst, Event{Entry: e, Workspace: s.names.name(ctx, e.WorkspaceID)})
	}
	clear(s.buf) // the events stay the feed's
	return dst
}

// Events subscribes to the changes of workspace ws ("" every workspace)
// that touch path p ("" all) after since (Now: from the newest). With a
// token (auth.FromContext), ws needs read; a store-wide stream keeps the
// events of the workspaces the token reaches (all of them for a
// store-wide admin).
func (l *Local) Events(ctx context.Context, ws, p string, since int64) (EventStream, error) {
	if err := l.permitAll(ctx, auth.Read, ws); err != nil {
		return nil, err
	}
	flt := feed.Filter{}
	if p != "" {
		var err error
		if flt.Path, err = clean(p); err != nil {
			return nil, err
		}
	}
	names := &workspaceNames{l: l}
	if ws != "" {
		w, err := l.workspace(ctx, ws)
		if err != nil {
			return nil, err
		}
		flt.WorkspaceID = w.ID()
		names.names = map[string]string{w.ID(): w.Name()}
	} else if s, ok := auth.FromContext(ctx); ok && !(s.Tenant == auth.AnyTenant && s.Perms&auth.Admin != 0) {
		names.scoped = true
		flt.Match = func(e feed.Event) bool { return names.name(ctx, e.WorkspaceID) != "" }
	}
	f := l.st.Feed()
	last := f.Last()
	if since == Now {
		since = last
	}
	c, err := f.Subscribe(ctx, since, flt)
	if err != nil {
		return nil, err
	}
	return &localStream{f: f, c: c, wsID: flt.WorkspaceID, last: last, finite: l.opts.FiniteEvents, names: names}, nil
}

// workspaceNames names the workspaces of one stream's events, reading
// the catalog (what the caller may list: its tenant, its token's scope)
// again when an ID is new. A stream is read by one goroutine.
type workspaceNames struct {
	l      *Local
	scoped bool              // names only what the token reaches
	names  map[string]string // "" for IDs of no visible workspace

	lastID, lastName string // the last name asked for: a workspace's stream asks for one
}

// name returns the name of workspace id ("" when it is gone, or not
// visible to the caller).
func (n *workspaceNames) name(ctx context.Context, id string) string {
	if id == "" {
		return ""
	}
	if id == n.lastID {
		return n.lastName
	}
	name, ok := n.names[id]
	if !ok {
		name = n.read(ctx, id)
	}
	n.lastID, n.lastName = id, name
	return name
}

// read reads the catalog again for the name of the new id.
func (n *workspaceNames) read(ctx context.Context, id string) string {
	if n.names == nil {
		n.names = map[string]string{}
	}
	n.names[id] = ""
	list := n.l.st.List
	if n.scoped {
		list = n.l.visible
	}
	if infos, err := list(ctx); err == nil {
		for _, i := range infos {
			n.names[i.ID] = i.Name
		}
	}
	return n.names[id]
}

// Events subscribes to the server's event stream of workspace ws (""
// every workspace) after since (Now: from the newest). The stream
// reconnects by itself when the connection drops, from the last event it
// delivered (Last-Event-ID); a start the server cannot continue from is
// ErrTooOld, from Events or later from Next. Close it when done.
func (c *Client) Events(ctx context.Context, ws, p string, since int64) (EventStream, error) {
	if p != "" {
		var err error
		if p, err = vfs.CleanPath(p); err != nil {
			return nil, err
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	s := &clientStream{c: c, ws: ws, path: p, seq: since, cancel: cancel, events: make(chan Event, 64), done: make(chan struct{})}
	body, err := s.connect(ctx)
	if err != nil {
		cancel()
		return nil, err
	}
	go s.pump(ctx, body)
	return s, nil
}

// clientStream reads one server stream, reconnecting when it drops.
type clientStream struct {
	c      *Client
	ws     string
	path   string
	cancel context.CancelFunc
	events chan Event
	done   chan struct{}

	mu   sync.Mutex
	seq  int64 // the last event received (the pump's position)
	last int64
	err  error // why the pump stopped

	delivered int64 // Next's position
}

func (s *clientStream) Seq() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.delivered
}

func (s *clientStream) Last() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.last
}

func (s *clientStream) Close() error {
	s.cancel()
	<-s.done
	return nil
}

// Next implements EventStream: the events received so far, at least one.
func (s *clientStream) Next(ctx context.Context) ([]Event, error) {
	var out []Event
	select {
	case e, ok := <-s.events:
		if !ok {
			s.mu.Lock()
			defer s.mu.Unlock()
			return nil, s.err
		}
		out = append(out, e)
	case <-ctx.Done():
		return nil, ctx.Err()
	}
more:
	for len(out) < cap(s.events) {
		select {
		case e, ok := <-s.events:
			if !ok {
				break more // the error comes with the next call
			}
			out = append(out, e)
		default:
			break more
		}
	}
	s.mu.Lock()
	s.delivered = out[len(out)-1].Seq
	s.mu.Unlock()
	return out, nil
}

// connect opens the stream after s.seq and reads its ready event.
func (s *clientStream) connect(ctx context.Context) (*sseReader, error) {
	s.mu.Lock()
	seq := s.seq
	s.mu.Unlock()
	var q url.Values
	if s.path != "" {
		q = url.Values{"path": {s.path}}
	}
	u := s.c.u(q, "events")
	if s.ws != "" {
		u = s.c.u(q, ws(s.ws), "events")
	}
	h := http.Header{"Accept": {"text/event-stream"}}
	if seq != Now {
		h.Set("Last-Event-ID", strconv.FormatInt(seq, 10))
	}
	resp, err := s.c.do(ctx, "GET", u, nil, h)
	if err != nil {
		return nil, err
	}
	r := &sseReader{body: resp.Body, br: newLineReader(resp.Body)}
	kind, data, _, err := r.next()
	if err == nil && kind != "ready" {
		err = fmt.Errorf("GET %s: %w: the stream began with %q, not ready", u, ErrBadRequest, kind)
	}
	var ready EventReady
	if err == nil {
		err = json.Unmarshal(data, &ready)
	}
	if err != nil {
		resp.Body.Close()
		return nil, err
	}
	s.mu.Lock()
	s.seq, s.last = ready.Seq, ready.Last
	if seq == Now {
		s.delivered = ready.Seq
	}
	s.mu.Unlock()
	return r, nil
}

// pump copies events to s.events, reconnecting after a dropped
// connection (waiting a second between attempts) until ctx ends or the
// server refuses.
func (s *clientStream) pump(ctx context.Context, r *sseReader) {
	defer close(s.done)
	defer close(s.events)
	fail := func(err error) {
		s.mu.Lock()
		s.err = err
		s.mu.Unlock()
	}
	for {
		err := s.read(ctx, r)
		r.body.Close()
		if ctx.Err() != nil {
			fail(ctx.Err())
			return
		}
		var apiErr *Error
		if errors.As(err, &apiErr) {
			fail(err)
			return
		}
		for r = nil; r == nil; {
			select {
			case <-ctx.Done():
				fail(ctx.Err())
				return
			case <-time.After(time.Second):
			}
			r, err = s.connect(ctx)
			if errors.As(err, &apiErr) && apiErr.Status != http.StatusServiceUnavailable {
				fail(err)
				return
			}
		}
	}
}

// read copies the change events of one connection; an error event ends
// it with that error (*Error).
func (s *clientStream) read(ctx context.Context, r *sseReader) error {
	for {
		kind, data, _, err := r.next()
		if err != nil {
			return err
		}
		switch kind {
		case "change":
			var e Event
			if err := json.Unmarshal(data, &e); err != nil {
				return err
			}
			s.mu.Lock()
			s.seq = e.Seq
			s.mu.Unlock()
			select {
			case s.events <- e:
			case <-ctx.Done():
				return ctx.Err()
			}
		case "error":
			e := &Error{Status: http.StatusGone}
			if json.Unmarshal(data, e) != nil || e.Code == "" {
				e.Code, e.Message = CodeInternal, string(data)
			}
			return e
		}
	}
}

// sseReader parses a text/event-stream.
type sseReader struct {
	body interface{ Close() error }
	br   *lineReader
}

// next returns the next event's type ("message" if unnamed), data and
// id, skipping comments.
func (r *sseReader) next() (kind string, data []byte, id string, err error) {
	var lines []string
	for {
		line, err := r.br.line()
		if err != nil {
			return "", nil, "", err
		}
		if line == "" {
			if lines == nil && kind == "" {
				continue
			}
			if kind == "" {
				kind = "message"
			}
			return kind, []byte(strings.Join(lines, "\n")), id, nil
		}
		field, value, _ := strings.Cut(line, ":")
		value = strings.TrimPrefix(value, " ")
		switch field {
		case "":
			// A comment (heartbeat).
		case "event":
			kind = value
		case "data":
			lines = append(lines, value)
		case "id":
			id = value
		}
	}
}

// lineReader reads the lines of an event stream, each at most 4 MiB.
type lineReader struct{ sc *bufio.Scanner }

func newLineReader(r io.Reader) *lineReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 4<<20)
	return &lineReader{sc: sc}
}

// line returns the next line without its end; a stream that ends is
// io.ErrUnexpectedEOF (streams end only when cut).
func (r *lineReader) line() (string, error) {
	if r.sc.Scan() {
		return strings.TrimSuffix(r.sc.Text(), "\r"), nil
	}
	if err := r.sc.Err(); err != nil {
		return "", err
	}
	return "", io.ErrUnexpectedEOF
}
