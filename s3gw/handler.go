package s3gw

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
	"regexp"
	"strings"
	"sync"
	"time"

	"github.com/johannesboyne/gofakes3"

	forkspace "github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/audit"
	"github.com/forkspace/forkspace/auth"
)

// Credentials returns the secret key of an access key (false: unknown).
type Credentials func(accessKey string) (secret string, ok bool)

// Options configure a Handler.
type Options struct {
	// Credentials decides who may sign requests while Tokens is nil or
	// not enabled. Required.
	Credentials Credentials
	// Tokens, once enabled (the store holds a token), replaces
	// Credentials: an access key is a token's ID, its secret key the
	// token's S3 secret (auth.Tokens.S3Key), and each request is limited
	// to the token's scope: its tenant's buckets, read for GET and HEAD,
	// write for the rest, on the buckets its pattern matches (others are
	// NoSuchBucket, as missing ones).
	Tokens *auth.Tokens
	// Logger receives the protocol layer's errors (nil: discarded).
	Logger *slog.Logger
	// Now is the clock signatures are checked against (nil: time.Now).
	Now func() time.Time
}

// Handler serves a store as S3. It is safe for concurrent use.
type Handler struct {
	st   *forkspace.Store
	opts Options
	log  *slog.Logger

	mu    sync.Mutex
	byKey map[string]http.Handler // one protocol handler per access key
}

// New returns a Handler over st.
func New(st *forkspace.Store, opts Options) *Handler {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Handler{st: st, opts: opts, log: log, byKey: map[string]http.Handler{}}
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	sig, err := parseSignature(r)
	var scope *auth.Scope
	if err == nil {
		var secret string
		secret, scope, err = h.secret(r.Context(), sig.accessKey)
		if err == nil {
			err = sig.verify(r, secret, h.opts.Now())
		}
	}
	if err == nil && scope != nil {
		r = r.WithContext(forkspace.Scoped(r.Context(), *scope))
		err = allowBucket(r)
	}
	if err == nil && !sig.presigned && sig.payloadHash != unsignedBody && sig.payloadHash != streamingBody && r.Body != nil {
		r.Body, err = newCheckedBody(r.Body, sig.payloadHash)
	}
	if err == nil {
		err = refuseWrite(r)
	}
	if err == nil && r.Method == http.MethodPost && r.URL.Query().Has("uploadId") {
		err = checkPartOrder(r)
	}
	if err != nil {
		ae := err.(*authError)
		status := http.StatusForbidden
		switch {
		case badRequest[ae.code]:
			status = http.StatusBadRequest
		case ae.code == "NoSuchBucket":
			status = http.StatusNotFound
		}
		writeError(w, r, status, ae.code, ae.msg)
		return
	}
	if h.answer(w, r, sig.accessKey) {
		return
	}
	fw := &fixWriter{ResponseWriter: w}
	if r.Body != nil && r.Body != http.NoBody {
		fw.body = &trackedBody{ReadCloser: r.Body}
		r.Body = fw.body
	}
	h.protocol(sig.accessKey, scope).ServeHTTP(fw, r)
	fw.finish()
}

// secret returns the secret key of an access key, and the scope of its
// token when tokens are on.
func (h *Handler) secret(ctx context.Context, accessKey string) (string, *auth.Scope, error) {
	if h.opts.Tokens != nil && h.opts.Tokens.Enabled() {
		secret, scope, err := h.opts.Tokens.S3Key(ctx, accessKey)
		if err != nil {
			return "", nil, denied("InvalidAccessKeyId", "access key %q: %v", accessKey, err)
		}
		return secret, &scope, nil
	}
	secret, ok := h.opts.Credentials(accessKey)
	if !ok {
		return "", nil, denied("InvalidAccessKeyId", "access key %q is not known here", accessKey)
	}
	return secret, nil, nil
}

// allowBucket checks the request's bucket against the token of its
// context: read for GET and HEAD, write otherwise; the listing of
// buckets is filtered instead (backend.ListBuckets).
func allowBucket(r *http.Request) error {
	bucket, _, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	if bucket == "" {
		return nil
	}
	op := auth.Write
	if r.Method == http.MethodGet || r.Method == http.MethodHead {
		op = auth.Read
	}
	name, _, _ := strings.Cut(bucket, "@")
	err := auth.Allowed(r.Context(), op, forkspace.TenantFrom(r.Context()), name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return &authError{code: "NoSuchBucket", msg: fmt.Sprintf("bucket %q does not exist", bucket)}
	case err != nil:
		return denied("AccessDenied", "%v", err)
	}
	return nil
}

// protocol returns the S3 protocol handler of an access key, whose
// backend records its changes as made by that key, in its token's
// tenant and scope (nil: no token).
func (h *Handler) protocol(accessKey string, scope *auth.Scope) http.Handler {
	h.mu.Lock()
	defer h.mu.Unlock()
	if p, ok := h.byKey[accessKey]; ok {
		return p
	}
	ctx := audit.WithActor(context.Background(), audit.Actor{Name: "s3:" + accessKey})
	if scope != nil {
		ctx = forkspace.Scoped(ctx, *scope)
	}
	b := &backend{st: h.st, ctx: ctx, etags: newETagCache()}
	g := gofakes3.New(b, gofakes3.WithoutVersioning(), gofakes3.WithHostBucket(false),
		gofakes3.WithLogger(slogLogger{h.log}))
	p := g.Server()
	h.byKey[accessKey] = p
	return p
}

// answer serves the requests gofakes3 gets wrong for this store, and
// reports whether it did: creating a bucket (a workspace: its names are
// the store's, not S3's 3 to 63 characters, and creating one's own
// existing bucket succeeds, as in us-east-1), and object or bucket ACLs
// (every object belongs to the key that reads it; ACLs cannot be set).
func (h *Handler) answer(w http.ResponseWriter, r *http.Request, accessKey string) bool {
	bucket, key, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	q := r.URL.Query()
	switch {
	case q.Has("acl") && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		w.Header().Set("Content-Type", "application/xml")
		fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>`+"\n"+
			`<AccessControlPolicy xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Owner><ID>%[1]s</ID><DisplayName>%[1]s</DisplayName></Owner>`+
			`<AccessControlList><Grant><Grantee xmlns:xsi="http://www.w3.org/2001/XMLSchema-instance" xsi:type="CanonicalUser"><ID>%[1]s</ID><DisplayName>%[1]s</DisplayName></Grantee>`+
			`<Permission>FULL_CONTROL</Permission></Grant></AccessControlList></AccessControlPolicy>`, accessKey)
		return true
	case q.Has("acl"):
		writeError(w, r, http.StatusNotImplemented, "NotImplemented", "ACLs cannot be set: every object belongs to the keys that may sign for the store")
		return true
	case r.Method == http.MethodPut && bucket != "" && key == "" && len(q) == 0:
		_, err := h.st.Create(context.WithoutCancel(r.Context()), bucket, forkspace.CreateOptions{})
		switch {
		case err == nil, errors.Is(err, fs.ErrExist):
			w.Header().Set("Location", "/"+bucket)
			w.WriteHeader(http.StatusOK)
		case errors.Is(err, fs.ErrInvalid):
			writeError(w, r, http.StatusBadRequest, "InvalidBucketName", err.Error())
		default:
			writeError(w, r, http.StatusInternalServerError, "InternalError", err.Error())
		}
		return true
	}
	return false
}

// refuseWrite refuses, before anything runs, a request that would change
// a checkpoint bucket ("NAME@CHECKPOINT") or delete a workspace.
func refuseWrite(r *http.Request) error {
	bucket, key, _ := strings.Cut(strings.TrimPrefix(r.URL.Path, "/"), "/")
	writes := r.Method == http.MethodPut || r.Method == http.MethodPost || r.Method == http.MethodDelete
	switch {
	case writes && strings.Contains(bucket, "@"):
		return denied("AccessDenied", "bucket %s is a checkpoint: read-only", bucket)
	case r.Method == http.MethodDelete && bucket != "" && key == "":
		return denied("AccessDenied", "workspaces are deleted with the CLI, the API or the tools, not through S3")
	}
	return nil
}

// badRequest are the refusals answered 400 rather than 403.
var badRequest = map[string]bool{
	"InvalidRequest": true, "AuthorizationHeaderMalformed": true, "AuthorizationQueryParametersError": true,
	"InvalidPartOrder": true, "MalformedXML": true,
}

// maxCompleteBody bounds a CompleteMultipartUpload document (10,000
// parts of ~100 bytes each).
const maxCompleteBody = 2 << 20

// checkPartOrder refuses a CompleteMultipartUpload whose parts are not in
// ascending order (gofakes3 would join them as listed), and puts the
// body back for the protocol handler.
func checkPartOrder(r *http.Request) error {
	b, err := io.ReadAll(io.LimitReader(r.Body, maxCompleteBody+1))
	if err != nil || len(b) > maxCompleteBody {
		return denied("MalformedXML", "the part list could not be read whole (%d bytes at most)", maxCompleteBody)
	}
	r.Body = io.NopCloser(bytes.NewReader(b))
	var doc struct {
		Parts []struct {
			PartNumber int
		} `xml:"Part"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		return denied("MalformedXML", "the part list is not well-formed XML: %v", err)
	}
	for i := 1; i < len(doc.Parts); i++ {
		if doc.Parts[i].PartNumber <= doc.Parts[i-1].PartNumber {
			return denied("InvalidPartOrder", "part %d is listed after part %d: list parts in ascending order", doc.Parts[i].PartNumber, doc.Parts[i-1].PartNumber)
		}
	}
	return nil
}

// writeError answers with an S3 error document.
func writeError(w http.ResponseWriter, r *http.Request, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/xml")
	w.WriteHeader(status)
	if r.Method == http.MethodHead {
		return
	}
	xml.NewEncoder(w).Encode(struct {
		XMLName  xml.Name `xml:"Error"`
		Code     string
		Message  string
		Resource string
	}{Code: code, Message: msg, Resource: r.URL.Path})
}

// statusOfCode gives the codes this package adds the statuses S3 (and
// Ceph, for QuotaExceeded) answers them with; gofakes3 would send 500.
var statusOfCode = map[string]int{
	string(errAccessDenied):  http.StatusForbidden,
	string(errQuotaExceeded): http.StatusForbidden,
	string(errConflict):      http.StatusConflict,
	string(errSlowDown):      http.StatusServiceUnavailable,
}

var codeRE = regexp.MustCompile(`<Code>([A-Za-z]+)</Code>`)

// fixWriter holds back a 500 answer until its body names the error code,
// and sends it with that code's status.
type fixWriter struct {
	http.ResponseWriter
	body *trackedBody // the request's, nil when it has none
	held bool
	buf  bytes.Buffer
}

func (w *fixWriter) WriteHeader(code int) {
	if w.body != nil && !w.body.done {
		// An answer before the whole body was read (a refused upload):
		// the rest of it must not be taken for the next request.
		w.Header().Set("Connection", "close")
	}
	if code == http.StatusInternalServerError {
		w.held = true
		return
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *fixWriter) Write(p []byte) (int, error) {
	if w.held {
		return w.buf.Write(p)
	}
	return w.ResponseWriter.Write(p)
}

func (w *fixWriter) finish() {
	if !w.held {
		return
	}
	status := http.StatusInternalServerError
	if m := codeRE.FindSubmatch(w.buf.Bytes()); m != nil {
		if s, ok := statusOfCode[string(m[1])]; ok {
			status = s
		}
	}
	w.ResponseWriter.WriteHeader(status)
	w.ResponseWriter.Write(w.buf.Bytes())
}

// trackedBody records whether a request body was read to its end.
type trackedBody struct {
	io.ReadCloser
	done bool
}

func (b *trackedBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.done = true
	}
	return n, err
}

// slogLogger passes the protocol layer's errors to a slog.Logger.
type slogLogger struct{ log *slog.Logger }

func (l slogLogger) Print(level gofakes3.LogLevel, v ...any) {
	if level == gofakes3.LogErr {
		l.log.Warn("s3", "err", fmt.Sprint(v...))
	}
}
