package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/forkspace/forkspace/audit"
	"github.com/forkspace/forkspace/auth"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/execpolicy"
	"github.com/forkspace/forkspace/provider"
)

// Headers of the API.
const (
	// ActorHeader and SessionHeader name who makes a call, for the audit
	// log (unauthenticated claims until tokens exist).
	ActorHeader   = "X-Forkspace-Actor"
	SessionHeader = "X-Forkspace-Session"
	// ModeHeader carries a download's permission bits (octal).
	ModeHeader = "X-Forkspace-Mode"
	// Trailers of an export: what it wrote.
	EntriesTrailer = "X-Forkspace-Entries"
	BytesTrailer   = "X-Forkspace-Bytes"
)

// Limits of the server.
const (
	// MaxJSONBody bounds a JSON request body.
	MaxJSONBody = 1 << 20
	// DefaultIdleTimeout is how long a request or response body may make
	// no progress before the connection is dropped (a slow client never
	// holds a handler longer than that per read or write).
	DefaultIdleTimeout = 30 * time.Second
)

// Options configure a Server.
type Options struct {
	// API is what the server serves (required): a Local for a store.
	API    API
	Logger *slog.Logger
	// BodyIdle bounds the wait for each read of a request body and each
	// write of a response body (default DefaultIdleTimeout; a write may
	// be cut after half of it: its deadline is renewed only when less
	// than half is left).
	BodyIdle time.Duration
	// Heartbeat is how often an event stream sends a comment (default
	// DefaultHeartbeat).
	Heartbeat time.Duration
	// Observe, if set, hears the route pattern and status of every
	// response (tests check that every documented status is reached).
	Observe func(method, pattern string, status int)
	// Tokens, if set, puts the API behind Authenticate: once the store
	// has a token, every request needs one, and each route checks its
	// scope (route.need).
	Tokens *auth.Tokens
}

// Server serves the REST API under /v1. Mount Handler at "/" (it answers
// only paths under /v1/) and wrap the whole server in Guard.
type Server struct {
	opts   Options
	log    *slog.Logger
	mux    *http.ServeMux
	frames frames // feed.go
	fan    fanout // feeddirect.go
}

// NewServer returns a Server for opts.API.
func NewServer(opts Options) *Server {
	if opts.API == nil {
		panic("httpapi.NewServer: API is required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.BodyIdle <= 0 {
		opts.BodyIdle = DefaultIdleTimeout
	}
	if opts.Heartbeat <= 0 {
		opts.Heartbeat = DefaultHeartbeat
	}
	s := &Server{opts: opts, log: opts.Logger.With("component", "httpapi"), mux: http.NewServeMux()}
	for _, rt := range routes {
		s.mux.Handle(rt.method+" "+rt.pattern, s.wrap(rt))
	}
	s.mux.HandleFunc("/v1/", func(w http.ResponseWriter, r *http.Request) {
		fail(w, r, fmt.Errorf("%s %s: %w", r.Method, quoteShort(r.URL.Path), ErrNoRoute))
	})
	return s
}

// Handler returns the handler of /v1/, behind Authenticate when
// Options.Tokens is set. A URL path with "." or ".." elements is refused
// (400) before routing: ServeMux would clean it into another route, and
// in a workspace path it is an escape attempt.
func (s *Server) Handler() http.Handler {
	return Authenticate(s.opts.Tokens, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		for seg := range strings.SplitSeq(r.URL.Path, "/") {
			if seg == "." || seg == ".." {
				fail(w, r, &fs.PathError{Op: "route", Path: r.URL.Path, Err: fmt.Errorf("%w: '.' and '..' elements are not allowed in a URL path (send the cleaned workspace path)", fs.ErrInvalid)})
				return
			}
		}
		s.mux.ServeHTTP(w, r)
	}))
}

// HTTPServer returns an http.Server for h with the timeouts a server
// facing untrusted clients needs: headers must arrive within 10 s and be
// at most 64 KiB, idle keep-alive connections close after 2 minutes.
// Bodies have no overall deadline (uploads and downloads of any size);
// the API's handlers bound each read and write instead (Options.BodyIdle).
func HTTPServer(h http.Handler) *http.Server {
	return &http.Server{
		Handler:           h,
		ReadHeaderTimeout: 10 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ConnContext:       withConn, // feeddirect.go
	}
}

// statusWriter remembers the status written.
type statusWriter struct {
	http.ResponseWriter
	status int
}

func (w *statusWriter) WriteHeader(code int) {
	if w.status == 0 {
		w.status = code
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.status = http.StatusOK
	}
	return w.ResponseWriter.Write(p)
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// wrap adapts a route's handler: the actor from the headers, errors as
// JSON, bounded body reads and writes, the observer.
func (s *Server) wrap(rt route) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		sw := &statusWriter{ResponseWriter: w}
		actor := audit.Actor{Name: r.Header.Get(ActorHeader), Session: r.Header.Get(SessionHeader)}
		if actor.Name == "" {
			actor.Name = "rest"
		}
		if scope, ok := auth.FromContext(r.Context()); ok {
			// The name is the client's claim; the token is not.
			actor.Name += " token:" + scope.TokenID
		}
		ctx := audit.WithActor(r.Context(), actor)
		rc := http.NewResponseController(w)
		rc.SetWriteDeadline(time.Now().Add(s.opts.BodyIdle))
		if r.Body != nil {
			r.Body = &idleReader{r: r.Body, rc: rc, idle: s.opts.BodyIdle}
		}
		err := s.authorize(r, rt.need)
		if err == nil {
			err = rt.handle(s, &idleWriter{statusWriter: sw, rc: rc, idle: s.opts.BodyIdle}, r.WithContext(ctx))
		}
		if err != nil {
			if sw.status != 0 {
				// The response has begun: all that is left is to cut it
				// (keeping the write deadline, so closing does not wait
				// on a stalled client to flush).
				s.log.Warn("response cut", "route", rt.pattern, "err", err)
				panic(http.ErrAbortHandler)
			}
			fail(sw, r, err)
		}
		// Send what is buffered within one more idle period, then leave
		// the kept-alive connection without body deadlines.
		if err := rc.Flush(); err != nil && sw.status != 0 {
			s.log.Warn("response cut", "route", rt.pattern, "err", err)
			panic(http.ErrAbortHandler)
		}
		rc.SetReadDeadline(time.Time{})
		rc.SetWriteDeadline(time.Time{})
		if s.opts.Observe != nil {
			s.opts.Observe(rt.method, rt.pattern, sw.status)
		}
	})
}

// idleReader bounds each read of a request body.
type idleReader struct {
	r    io.ReadCloser
	rc   *http.ResponseController
	idle time.Duration
}

func (r *idleReader) Read(p []byte) (int, error) {
	r.rc.SetReadDeadline(time.Now().Add(r.idle))
	return r.r.Read(p)
}

func (r *idleReader) Close() error { return r.r.Close() }

// idleWriter bounds each write of a response body: it may wait at least
// half the idle bound and at most all of it. The deadline is moved only
// when less than half of it is left: an event stream writes a small frame
// per event, and setting a deadline costs as much as the write to the
// buffer.
type idleWriter struct {
	*statusWriter
	rc       *http.ResponseController
	idle     time.Duration
	deadline time.Time
}

func (w *idleWriter) Write(p []byte) (int, error) {
	if now := time.Now(); w.deadline.Sub(now) < w.idle/2 {
		w.deadline = now.Add(w.idle)
		w.rc.SetWriteDeadline(w.deadline)
	}
	return w.statusWriter.Write(p)
}

// Flush sends what was written so far.
func (w *idleWriter) Flush() { w.rc.Flush() }

// decode reads a JSON body into v: one object, no unknown fields, at most
// MaxJSONBody bytes. An empty body leaves v as it is when optional.
func decode(r *http.Request, v any, optional bool) error {
	body := http.MaxBytesReader(nil, r.Body, MaxJSONBody)
	dec := json.NewDecoder(body)
	dec.DisallowUnknownFields()
	err := dec.Decode(v)
	switch {
	case errors.Is(err, io.EOF) && optional:
		return nil
	case errors.As(err, new(*http.MaxBytesError)):
		return fmt.Errorf("request body: %w: more than %d bytes of JSON", ErrTooLarge, MaxJSONBody)
	case err != nil:
		return fmt.Errorf("request body: %w: %v", ErrBadRequest, err)
	}
	if err := dec.Decode(new(json.RawMessage)); !errors.Is(err, io.EOF) {
		return fmt.Errorf("request body: %w: more than one JSON value", ErrBadRequest)
	}
	return nil
}

// reply writes v as JSON with status.
func reply(w http.ResponseWriter, status int, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return replyJSON(w, status, b, true)
}

// replyJSON writes status and, with body, the JSON b as one line. The
// headers carry its Content-Length: a small response then leaves in one
// write, where a flushed response of unknown length would be chunked and
// need a second write for its end.
func replyJSON(w http.ResponseWriter, status int, b []byte, body bool) error {
	b = append(b, '\n')
	h := w.Header()
	h.Set("Content-Type", "application/json")
	h.Set("Content-Length", strconv.Itoa(len(b)))
	w.WriteHeader(status)
	if !body {
		return nil
	}
	_, err := w.Write(b)
	return err
}

// query parameters.
func qBool(r *http.Request, name string) (bool, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, fmt.Errorf("parameter %s=%s: %w: want true or false", name, quoteShort(v), ErrBadRequest)
	}
	return b, nil
}

func qInt(r *http.Request, name string) (int64, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("parameter %s=%s: %w: want an integer", name, quoteShort(v), ErrBadRequest)
	}
	return n, nil
}

func pageRequest(r *http.Request) (PageRequest, error) {
	n, err := qInt(r, "limit")
	if err != nil {
		return PageRequest{}, err
	}
	if n < 0 || n > MaxLimit {
		return PageRequest{}, fmt.Errorf("parameter limit=%d: %w: want 0 to %d", n, ErrBadRequest, MaxLimit)
	}
	return PageRequest{Cursor: r.URL.Query().Get("cursor"), Limit: int(n)}, nil
}

// filePath is the {path...} of a file route ("" is the root).
func filePath(r *http.Request) string {
	p := r.PathValue("path")
	if p == "" {
		return "."
	}
	return p
}

// Handlers, one per route (routes.go lists them).

func (s *Server) listWorkspaces(w http.ResponseWriter, r *http.Request) error {
	pr, err := pageRequest(r)
	if err != nil {
		return err
	}
	p, err := s.opts.API.ListWorkspaces(r.Context(), pr)
	if err != nil {
		return err
	}
	return reply(w, http.StatusOK, p)
}

func (s *Server) createWorkspace(w http.ResponseWriter, r *http.Request) error {
	var req CreateRequest
	if err := decode(r, &req, false); err != nil {
		return err
	}
	info, err := s.opts.API.CreateWorkspace(r.Context(), req)
	if err != nil {
		return err
	}
	return reply(w, http.StatusCreated, info)
}

func (s *Server) workspaceInfo(w http.ResponseWriter, r *http.Request) error {
	info, err := s.opts.API.WorkspaceInfo(r.Context(), r.PathValue("ws"))
	if err != nil {
		return err
	}
	return reply(w, http.StatusOK, info)
}

func (s *Server) deleteWorkspace(w http.ResponseWriter, r *http.Request) error {
	if err := s.opts.API.DeleteWorkspace(r.Context(), r.PathValue("ws")); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) forkWorkspace(w http.ResponseWriter, r *http.Request) error {
	var req ForkRequest
	if err := decode(r, &req, false); err != nil {
		return err
	}
	info, err := s.opts.API.ForkWorkspace(r.Context(), r.PathValue("ws"), req)
	if err != nil {
		return err
	}
	return reply(w, http.StatusCreated, info)
}

// StateJSON names a state.
type StateJSON struct {
	State string `json:"state"`
}

func (s *Server) parent(w http.ResponseWriter, r *http.Request) error {
	p, err := s.opts.API.Parent(r.Context(), r.PathValue("ws"))
	if err != nil {
		return err
	}
	return reply(w, http.StatusOK, StateJSON{State: p})
}

func (s *Server) checkpoints(w http.ResponseWriter, r *http.Request) error {
	cps, err := s.opts.API.Checkpoints(r.Context(), r.PathValue("ws"))
	if err != nil {
		return err
	}
	return reply(w, http.StatusOK, cps)
}

// CheckpointRequest labels a new checkpoint.
type CheckpointRequest struct {
	Label string `json:"label,omitempty"`
}

func (s *Server) checkpoint(w http.ResponseWriter, r *http.Request) error {
	var req CheckpointRequest
	if err := decode(r, &req, true); err != nil {
		return err
	}
	cp, err := s.opts.API.Checkpoint(r.Context(), r.PathValue("ws"), req.Label)
	if err != nil {
		return err
	}
	return reply(w, http.StatusCreated, cp)
}

// RestoreRequest names the checkpoint to restore; the reply echoes it with
// the workspace (the JSON shape of `forkspace restore --json`).
type RestoreRequest struct {
	Checkpoint string `json:"checkpoint"`
}

type RestoreResult struct {
	Workspace  string `json:"workspace"`
	Checkpoint string `json:"checkpoint"`
}

func (s *Server) restore(w http.ResponseWriter, r *http.Request) error {
	var req RestoreRequest
	if err := decode(r, &req, false); err != nil {
		return err
	}
	ws := r.PathValue("ws")
	if err := s.opts.API.Restore(r.Context(), ws, req.Checkpoint); err != nil {
		return err
	}
	return reply(w, http.StatusOK, RestoreResult{Workspace: ws, Checkpoint: req.Checkpoint})
}

func (s *Server) diff(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	from, to := q.Get("from"), q.Get("to")
	if from == "" || to == "" {
		return fmt.Errorf("diff: %w: parameters from and to are required", ErrBadRequest)
	}
	format := q.Get("format")
	if format != "" && format != "json" && format != "unified" {
		return fmt.Errorf("parameter format=%s: %w: want json or unified", quoteShort(format), ErrBadRequest)
	}
	unified, err := qBool(r, "unified")
	if err != nil {
		return err
	}
	changes, err := s.opts.API.Diff(r.Context(), from, to, unified || format == "unified")
	if err != nil {
		return err
	}
	if format != "unified" {
		return reply(w, http.StatusOK, changes)
	}
	w.Header().Set("Content-Type", "text/x-diff; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, err = io.WriteString(w, FormatChanges(changes))
	return err
}

func (s *Server) stat(w http.ResponseWriter, r *http.Request) error {
	e, err := s.opts.API.Stat(r.Context(), r.PathValue("ws"), filePath(r))
	if err != nil {
		return err
	}
	b, err := appendEntry(nil, e)
	if err != nil {
		return err
	}
	return replyJSON(w, http.StatusOK, b, true)
}

func (s *Server) readDir(w http.ResponseWriter, r *http.Request) error {
	pr, err := pageRequest(r)
	if err != nil {
		return err
	}
	p, err := s.opts.API.ReadDir(r.Context(), r.PathValue("ws"), filePath(r), pr)
	if err != nil {
		return err
	}
	b, err := appendDirPage(nil, p)
	if err != nil {
		return err
	}
	return replyJSON(w, http.StatusOK, b, true)
}

func (s *Server) download(w http.ResponseWriter, r *http.Request) error {
	req := ReadRequest{Length: -1, IfNoneMatch: etagList(r.Header.Get("If-None-Match"))}
	if rg := r.Header.Get("Range"); rg != "" {
		if ir := r.Header.Get("If-Range"); ir == "" || !strings.HasPrefix(ir, "W/") {
			if parseRange(rg, &req) {
				req.Ranged, req.IfRange = true, ir
			}
		}
	}
	d, err := s.opts.API.Open(r.Context(), r.PathValue("ws"), filePath(r), req)
	if errors.Is(err, ErrNotModified) {
		w.WriteHeader(http.StatusNotModified)
		return nil
	}
	if err != nil {
		return err
	}
	defer d.Close()
	// The first read comes before the headers, so a file that cannot be
	// read (damaged, say) is an error response, not a cut stream.
	buf := make([]byte, min(256<<10, max(d.Length, 512)))
	n, err := io.ReadFull(d, buf[:min(int64(len(buf)), d.Length)])
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("ETag", d.Entry.ETag)
	h.Set("Last-Modified", d.Entry.Mtime.UTC().Format(http.TimeFormat))
	h.Set("Accept-Ranges", "bytes")
	h.Set(ModeHeader, d.Entry.Mode)
	h.Set("Content-Type", "application/octet-stream")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.FormatInt(d.Length, 10))
	status := http.StatusOK
	if d.Ranged {
		status = http.StatusPartialContent
		h.Set("Content-Range", fmt.Sprintf("bytes %d-%d/%d", d.Offset, d.Offset+d.Length-1, d.Entry.Size))
	}
	w.WriteHeader(status)
	if r.Method == http.MethodHead {
		return nil
	}
	if _, err := w.Write(buf[:n]); err != nil {
		return err
	}
	_, err = io.CopyBuffer(w, d, buf)
	return err
}

// etagList splits an If-Match or If-None-Match header.
func etagList(h string) []string {
	var out []string
	for t := range strings.SplitSeq(h, ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// parseRange reads a single byte range ("bytes=A-B", "bytes=A-",
// "bytes=-N") into req; anything else is ignored (the whole file is
// sent), as RFC 9110 allows.
func parseRange(h string, req *ReadRequest) bool {
	spec, ok := strings.CutPrefix(h, "bytes=")
	if !ok || strings.Contains(spec, ",") {
		return false
	}
	a, b, ok := strings.Cut(strings.TrimSpace(spec), "-")
	if !ok {
		return false
	}
	if a == "" {
		n, err := strconv.ParseInt(b, 10, 64)
		if err != nil || n <= 0 {
			return false
		}
		req.Suffix = n
		return true
	}
	start, err := strconv.ParseInt(a, 10, 64)
	if err != nil || start < 0 {
		return false
	}
	req.Offset = start
	if b == "" {
		return true
	}
	end, err := strconv.ParseInt(b, 10, 64)
	if err != nil || end < start {
		return false
	}
	req.Length = end - start + 1
	return true
}

func (s *Server) upload(w http.ResponseWriter, r *http.Request) error {
	req := WriteRequest{IfMatch: etagList(r.Header.Get("If-Match"))}
	switch inm := r.Header.Get("If-None-Match"); inm {
	case "":
	case "*":
		req.CreateOnly = true
	default:
		return fmt.Errorf("If-None-Match %s: %w: an upload takes only *", quoteShort(inm), ErrBadRequest)
	}
	if m := r.URL.Query().Get("mode"); m != "" {
		u, err := strconv.ParseUint(m, 8, 32)
		if err != nil || u > 0o7777 || u == 0 {
			return fmt.Errorf("parameter mode=%s: %w: want octal permission bits such as 0644", quoteShort(m), ErrBadRequest)
		}
		req.Perm = unixPerm(uint32(u))
	}
	e, err := s.opts.API.Write(r.Context(), r.PathValue("ws"), filePath(r), r.Body, req)
	if err != nil {
		return err
	}
	w.Header().Set("ETag", e.ETag)
	return reply(w, http.StatusOK, e)
}

// unixPerm converts permission and special bits to an fs.FileMode.
func unixPerm(u uint32) fs.FileMode {
	m := fs.FileMode(u & 0o777)
	if u&0o4000 != 0 {
		m |= fs.ModeSetuid
	}
	if u&0o2000 != 0 {
		m |= fs.ModeSetgid
	}
	if u&0o1000 != 0 {
		m |= fs.ModeSticky
	}
	return m
}

func (s *Server) remove(w http.ResponseWriter, r *http.Request) error {
	rec, err := qBool(r, "recursive")
	if err != nil {
		return err
	}
	if err := s.opts.API.Remove(r.Context(), r.PathValue("ws"), filePath(r), rec); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// RenameRequest moves From to To; MkdirRequest creates Path.
type RenameRequest struct {
	From string `json:"from"`
	To   string `json:"to"`
}

type MkdirRequest struct {
	Path    string `json:"path"`
	Parents bool   `json:"parents,omitempty"`
}

func (s *Server) rename(w http.ResponseWriter, r *http.Request) error {
	var req RenameRequest
	if err := decode(r, &req, false); err != nil {
		return err
	}
	if err := s.opts.API.Rename(r.Context(), r.PathValue("ws"), req.From, req.To); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) mkdir(w http.ResponseWriter, r *http.Request) error {
	var req MkdirRequest
	if err := decode(r, &req, false); err != nil {
		return err
	}
	if err := s.opts.API.Mkdir(r.Context(), r.PathValue("ws"), req.Path, req.Parents); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) glob(w http.ResponseWriter, r *http.Request) error {
	var req GlobRequest
	if err := decode(r, &req, false); err != nil {
		return err
	}
	t, err := s.opts.API.Glob(r.Context(), r.PathValue("ws"), req)
	if err != nil {
		return err
	}
	return reply(w, http.StatusOK, t)
}

func (s *Server) grep(w http.ResponseWriter, r *http.Request) error {
	var req GrepRequest
	if err := decode(r, &req, false); err != nil {
		return err
	}
	t, err := s.opts.API.Grep(r.Context(), r.PathValue("ws"), req)
	if err != nil {
		return err
	}
	return reply(w, http.StatusOK, t)
}

// ExecEvent is one line of exec's response stream (application/x-ndjson):
// output as it comes (base64 in JSON), then the result or the error.
type ExecEvent struct {
	Stdout []byte          `json:"stdout,omitempty"`
	Stderr []byte          `json:"stderr,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *Error          `json:"error,omitempty"`
}

// eventWriter writes output events to a shared stream.
type eventWriter struct {
	mu     *sync.Mutex
	enc    *json.Encoder
	start  func() // before the first event
	flush  func()
	stderr bool
	err    error
}

func (e *eventWriter) Write(p []byte) (int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.err != nil {
		return 0, e.err
	}
	ev := ExecEvent{Stdout: p}
	if e.stderr {
		ev = ExecEvent{Stderr: p}
	}
	e.start()
	if e.err = e.enc.Encode(ev); e.err != nil {
		return 0, e.err
	}
	e.flush()
	return len(p), nil
}

func (s *Server) exec(w http.ResponseWriter, r *http.Request) error {
	var req provider.ExecRequest
	if err := decode(r, &req, false); err != nil {
		return err
	}
	var mu sync.Mutex
	enc := json.NewEncoder(w)
	flush := func() { http.NewResponseController(w).Flush() }
	started := false
	start := func() {
		if !started {
			started = true
			w.Header().Set("Content-Type", "application/x-ndjson")
			w.WriteHeader(http.StatusOK)
		}
	}
	out := &eventWriter{mu: &mu, enc: enc, start: start, flush: flush}
	errw := &eventWriter{mu: &mu, enc: enc, start: start, flush: flush, stderr: true}
	// The stream starts with the first output: an error before any (a
	// missing workspace, a refused request) is an ordinary error
	// response, one after it an event.
	res, err := s.opts.API.Exec(r.Context(), r.PathValue("ws"), req, out, errw)
	mu.Lock()
	defer mu.Unlock()
	if err != nil && !started {
		return err
	}
	start()
	if err != nil {
		code, status := classify(err)
		e := &Error{Status: status, Code: code, Message: err.Error()}
		if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
			e.Path = pe.Path
		}
		return enc.Encode(ExecEvent{Error: e})
	}
	raw, err := json.Marshal(res)
	if err != nil {
		return err
	}
	return enc.Encode(ExecEvent{Result: raw})
}

func (s *Server) execPolicy(w http.ResponseWriter, r *http.Request) error {
	p, err := s.opts.API.ExecPolicy(r.Context(), r.PathValue("ws"))
	if err != nil {
		return err
	}
	return reply(w, http.StatusOK, p)
}

func (s *Server) setExecPolicy(w http.ResponseWriter, r *http.Request) error {
	var req execpolicy.Policy
	if err := decode(r, &req, false); err != nil {
		return err
	}
	p, err := s.opts.API.SetExecPolicy(r.Context(), r.PathValue("ws"), req)
	if err != nil {
		return err
	}
	return reply(w, http.StatusOK, p)
}

func (s *Server) mounts(w http.ResponseWriter, r *http.Request) error {
	ms, err := s.opts.API.Mounts(r.Context(), r.PathValue("ws"))
	if err != nil {
		return err
	}
	return reply(w, http.StatusOK, ms)
}

// MountRequest names the mount root an action applies to ("" all).
type MountRequest struct {
	Root string `json:"root,omitempty"`
}

// ResolveRequest settles the conflict at Path.
type ResolveRequest struct {
	Path      string `json:"path"`
	KeepLocal bool   `json:"keep_local"`
}

func (s *Server) mountAction(w http.ResponseWriter, r *http.Request) error {
	var req MountRequest
	if err := decode(r, &req, true); err != nil {
		return err
	}
	if err := s.opts.API.MountAction(r.Context(), r.PathValue("ws"), MountAction(r.PathValue("action")), req.Root); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) resolveMount(w http.ResponseWriter, r *http.Request) error {
	var req ResolveRequest
	if err := decode(r, &req, false); err != nil {
		return err
	}
	if err := s.opts.API.ResolveMount(r.Context(), r.PathValue("ws"), req.Path, req.KeepLocal); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (s *Server) importTar(w http.ResponseWriter, r *http.Request) error {
	to := r.URL.Query().Get("to")
	if to == "" {
		to = "."
	}
	sum, err := s.opts.API.ImportTar(r.Context(), r.PathValue("ws"), to, r.Body)
	if err != nil {
		return err
	}
	return reply(w, http.StatusOK, sum)
}

func (s *Server) exportTar(w http.ResponseWriter, r *http.Request) error {
	from := r.URL.Query().Get("from")
	if from == "" {
		from = "."
	}
	// Check the source first, so a missing one is a JSON error, not a
	// cut stream.
	if _, err := s.opts.API.Stat(r.Context(), r.PathValue("ws"), from); err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/x-tar")
	w.Header().Set("Trailer", EntriesTrailer+", "+BytesTrailer)
	sum, err := s.opts.API.ExportTar(r.Context(), r.PathValue("ws"), from, w)
	if err != nil {
		return err
	}
	w.Header().Set(EntriesTrailer, strconv.FormatInt(sum.Entries, 10))
	w.Header().Set(BytesTrailer, strconv.FormatInt(sum.Bytes, 10))
	return nil
}

func (s *Server) auditLog(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	limit, err := qInt(r, "limit")
	if err != nil {
		return err
	}
	before, err := qInt(r, "before")
	if err != nil {
		return err
	}
	if limit < 0 || before < 0 {
		return fmt.Errorf("audit: %w: limit and before must not be negative", ErrBadRequest)
	}
	es, err := s.opts.API.Audit(r.Context(), q.Get("workspace"), audit.Filter{Session: q.Get("session"), Limit: int(limit), Before: before})
	if err != nil {
		return err
	}
	for i := range es {
		es[i].Error = errdefs.Redact(es[i].Error) // as recorded on the host
	}
	return reply(w, http.StatusOK, es)
}

func (s *Server) gc(w http.ResponseWriter, r *http.Request) error {
	var req GCRequest
	if err := decode(r, &req, false); err != nil {
		return err
	}
	res, err := s.opts.API.GC(r.Context(), req)
	if err != nil {
		return err
	}
	return reply(w, http.StatusOK, res)
}

func (s *Server) fsck(w http.ResponseWriter, r *http.Request) error {
	rep, err := s.opts.API.Fsck(r.Context())
	if err != nil {
		return err
	}
	return reply(w, http.StatusOK, rep)
}

func (s *Server) df(w http.ResponseWriter, r *http.Request) error {
	d, err := s.opts.API.DF(r.Context())
	if err != nil {
		return err
	}
	return reply(w, http.StatusOK, d)
}

func (s *Server) openAPI(w http.ResponseWriter, r *http.Request) error {
	doc, err := OpenAPI()
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "application/json")
	_, err = w.Write(doc)
	return err
}
