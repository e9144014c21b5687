package webdavfs

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"syscall"

	"golang.org/x/net/webdav"

	forkspace "github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/audit"
	"github.com/forkspace/forkspace/auth"
	"github.com/forkspace/forkspace/errdefs"
)

// Options configure a Handler.
type Options struct {
	// Prefix is the URL path the handler is mounted at ("" for the root,
	// or "/dav"); it is removed from request paths.
	Prefix string
	// Logger receives request errors at debug level (nil: discarded).
	Logger *slog.Logger
}

// Handler serves a store over WebDAV. It is safe for concurrent use.
type Handler struct {
	dav    *webdav.Handler
	prefix string
}

// New returns a Handler over st.
func New(st *forkspace.Store, opts Options) *Handler {
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	prefix := strings.TrimSuffix(opts.Prefix, "/")
	return &Handler{
		prefix: prefix,
		dav: &webdav.Handler{
			Prefix:     prefix,
			FileSystem: storeFS{st: st},
			LockSystem: webdav.NewMemLS(),
			Logger: func(r *http.Request, err error) {
				if err != nil {
					log.Debug("webdav", "method", r.Method, "path", r.URL.Path, "err", err)
				}
			},
		},
	}
}

// writeMethods change the resource they name.
var writeMethods = map[string]bool{
	"PUT": true, "DELETE": true, "MKCOL": true, "PROPPATCH": true, "LOCK": true, "MOVE": true,
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if status, msg := h.allowed(r); status != 0 {
		http.Error(w, msg, status)
		return
	}
	if ref := h.readOnlyTarget(r); ref != "" {
		http.Error(w, fmt.Sprintf("%s %s: checkpoint %s is read-only", r.Method, r.URL.Path, ref), http.StatusForbidden)
		return
	}
	if r.Method == "PROPFIND" || r.Method == "PROPPATCH" {
		if code, err := checkXMLBody(r); err != nil {
			http.Error(w, fmt.Sprintf("%s %s: %v", r.Method, r.URL.Path, err), code)
			return
		}
	}
	req := &request{}
	if r.Body != nil {
		r.Body = &body{ReadCloser: r.Body, req: req}
	}
	ctx := context.WithValue(r.Context(), requestKey{}, req)
	ctx = audit.WithActor(ctx, audit.Actor{Name: "webdav", Session: r.RemoteAddr})
	h.dav.ServeHTTP(&statusWriter{ResponseWriter: w, req: req}, r.WithContext(ctx))
}

// readOnlyTarget returns the checkpoint a writing request would change
// ("" if none): its own path for writing methods, the Destination of a
// COPY or MOVE.
func (h *Handler) readOnlyTarget(r *http.Request) string {
	var names []string
	if writeMethods[r.Method] {
		names = append(names, r.URL.Path)
	}
	if r.Method == "COPY" || r.Method == "MOVE" {
		if u, err := url.Parse(r.Header.Get("Destination")); err == nil {
			names = append(names, u.Path)
		}
	}
	for _, n := range names {
		if ref, _ := split(strings.TrimPrefix(n, h.prefix)); readOnlyRef(ref) {
			return ref
		}
	}
	return ""
}

// allowed checks the request against the caller's token, if the request
// carries one (auth.FromContext, set by httpapi.Authenticate): read on
// the workspace of its path, write for a writing method, COPY's
// Destination and MOVE's. A workspace the token does not reach is 404,
// as a missing one; a permission it lacks 403.
func (h *Handler) allowed(r *http.Request) (int, string) {
	if _, ok := auth.FromContext(r.Context()); !ok {
		return 0, ""
	}
	check := func(p string, op auth.Perm) (int, string) {
		ref, _ := split(strings.TrimPrefix(p, h.prefix))
		name, _, _ := strings.Cut(ref, "@")
		if name == "" {
			if op == auth.Read {
				return 0, "" // the root: its listing is filtered
			}
			name = ref
		}
		err := auth.Allowed(r.Context(), op, forkspace.TenantFrom(r.Context()), name)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return http.StatusNotFound, err.Error()
		case err != nil:
			return http.StatusForbidden, err.Error()
		}
		return 0, ""
	}
	op := auth.Read
	if writeMethods[r.Method] {
		op = auth.Write
	}
	if status, msg := check(r.URL.Path, op); status != 0 {
		return status, msg
	}
	if r.Method == "COPY" || r.Method == "MOVE" {
		u, err := url.Parse(r.Header.Get("Destination"))
		if err != nil {
			return http.StatusBadRequest, "Destination: " + err.Error()
		}
		return check(u.Path, auth.Write)
	}
	return 0, ""
}

// requestKey keys a request's state in its context.
type requestKey struct{}

// request is the state of one WebDAV request that the file system and the
// response share: the store error that decided its outcome, and whether
// its body arrived whole.
type request struct {
	mu      sync.Mutex
	cause   error // the latest store error: the one that decides a failure
	bodyErr error // the body's read failure (a cut-off upload)
}

func requestOf(ctx context.Context) *request {
	if r, ok := ctx.Value(requestKey{}).(*request); ok {
		return r
	}
	return &request{}
}

func (r *request) bodyFailure() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.bodyErr
}

func (r *request) setCause(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.cause = err
}

// body records a request body that fails before its end.
type body struct {
	io.ReadCloser
	req *request
}

func (b *body) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		b.req.mu.Lock()
		if b.req.bodyErr == nil {
			b.req.bodyErr = fmt.Errorf("the request body was cut off: %w", err)
		}
		b.req.mu.Unlock()
	}
	return n, err
}

// fail records err as the request's cause and returns it in the form the
// webdav handler tests for (os.IsNotExist and friends look only one
// *fs.PathError deep).
func fail(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	requestOf(ctx).setCause(err)
	var pe *fs.PathError
	op, path := "webdav", ""
	if errors.As(err, &pe) {
		op, path = pe.Op, pe.Path
	}
	for _, plain := range []error{fs.ErrNotExist, fs.ErrExist, fs.ErrPermission} {
		if errors.Is(err, plain) {
			return &fs.PathError{Op: op, Path: path, Err: plain}
		}
	}
	if errors.Is(err, errdefs.ErrReadOnly) {
		return &fs.PathError{Op: op, Path: path, Err: fs.ErrPermission}
	}
	return err
}

// statusOf is the status a request that failed with cause should get,
// given the one the handler chose.
func statusOf(cause error, chosen int) int {
	switch {
	case errors.Is(cause, errdefs.ErrQuota), errors.Is(cause, syscall.ENOSPC):
		return http.StatusInsufficientStorage
	case errors.Is(cause, syscall.EXDEV):
		return http.StatusBadGateway
	case errors.Is(cause, errdefs.ErrBusy):
		return http.StatusServiceUnavailable
	case errors.Is(cause, errdefs.ErrReadOnly), errors.Is(cause, fs.ErrPermission):
		return http.StatusForbidden
	case errors.Is(cause, errdefs.ErrNameTooLong), errors.Is(cause, fs.ErrInvalid):
		if chosen >= 500 {
			return http.StatusBadRequest
		}
	}
	return chosen
}

// statusWriter corrects an error status the webdav handler chose from the
// request's recorded cause, and then answers with the cause's message
// instead of the handler's status text.
type statusWriter struct {
	http.ResponseWriter
	req      *request
	replaced bool
}

func (w *statusWriter) WriteHeader(code int) {
	w.req.mu.Lock()
	cause := w.req.cause
	if cause == nil {
		cause = w.req.bodyErr
	}
	w.req.mu.Unlock()
	if code < 400 || cause == nil {
		w.ResponseWriter.WriteHeader(code)
		return
	}
	w.replaced = true
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Del("Content-Length")
	w.ResponseWriter.WriteHeader(statusOf(cause, code))
	fmt.Fprintln(w.ResponseWriter, cause)
}

func (w *statusWriter) Write(p []byte) (int, error) {
	if w.replaced {
		return len(p), nil // the handler's status text; the cause was written
	}
	return w.ResponseWriter.Write(p)
}

// maxXMLBody bounds the XML body of a PROPFIND or PROPPATCH.
const maxXMLBody = 1 << 20

// checkXMLBody reads the XML body of r (at most maxXMLBody bytes: 413
// beyond) and refuses a namespace prefix bound to the empty name, which
// XML namespaces forbid and encoding/xml accepts (400). It puts the body
// back for the handler, whose parser reports any other malformation.
func checkXMLBody(r *http.Request) (int, error) {
	if r.Body == nil {
		return 0, nil
	}
	b, err := io.ReadAll(io.LimitReader(r.Body, maxXMLBody+1))
	if err != nil {
		return http.StatusBadRequest, fmt.Errorf("read body: %w", err)
	}
	if len(b) > maxXMLBody {
		return http.StatusRequestEntityTooLarge, fmt.Errorf("XML body over %d bytes", maxXMLBody)
	}
	r.Body = io.NopCloser(bytes.NewReader(b))
	d := xml.NewDecoder(bytes.NewReader(b))
	for {
		tok, err := d.RawToken()
		if err != nil {
			return 0, nil // the end, or an error the handler reports
		}
		if se, ok := tok.(xml.StartElement); ok {
			for _, a := range se.Attr {
				if a.Name.Space == "xmlns" && a.Value == "" {
					return http.StatusBadRequest, fmt.Errorf("namespace prefix %q declared with an empty name", a.Name.Local)
				}
			}
		}
	}
}
