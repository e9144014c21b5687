package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"strings"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/feed"
)

// Error codes of the JSON error shape. Each names one sentinel error; a
// Client turns the code back into it, so errors.Is works the same on
// both sides of the API.
const (
	CodeNotFound        = "not_found"
	CodeExists          = "exists"
	CodeInvalid         = "invalid"
	CodeNameTooLong     = "name_too_long"
	CodeNotDir          = "not_dir"
	CodeIsDir           = "is_dir"
	CodeLoop            = "loop"
	CodeNotEmpty        = "not_empty"
	CodeQuota           = "quota"
	CodeReadOnly        = "read_only"
	CodePermission      = "permission"
	CodeUnauthenticated = "unauthenticated"
	CodeBusy            = "busy"
	CodeCorrupt         = "corrupt"
	CodeConflict        = "conflict"
	CodeStale           = "stale"
	CodeClosed          = "closed"
	CodeUnsupported     = "unsupported"
	CodePrecondition    = "precondition_failed"
	CodeNotModified     = "not_modified"
	CodeRange           = "range_not_satisfiable"
	CodeTooLarge        = "too_large"
	CodeForbidden       = "forbidden"
	CodeMethod          = "method_not_allowed"
	CodeRouteNotFound   = "no_route"
	CodeCanceled        = "canceled"
	CodeTimeout         = "timeout"
	CodeInternal        = "internal"
	CodeBadRequestBody  = "bad_request"
	CodeTooOld          = "too_old"
)

// Errors of this package that have no io/fs or errdefs sentinel.
var (
	// ErrPrecondition is an If-Match or If-None-Match that does not hold.
	ErrPrecondition = errors.New("precondition failed")
	// ErrNotModified is a read whose If-None-Match matches (HTTP 304).
	ErrNotModified = errors.New("not modified")
	// ErrRange is a Range header outside the file.
	ErrRange = errors.New("range not satisfiable")
	// ErrTooLarge is a request body or argument past its limit.
	ErrTooLarge = errors.New("request too large")
	// ErrForbidden is a request refused by Guard (foreign host or origin).
	ErrForbidden = errors.New("forbidden")
	// ErrBadRequest is a request the API cannot parse (malformed JSON,
	// unknown fields, bad parameters); it wraps fs.ErrInvalid.
	ErrBadRequest = fmt.Errorf("bad request: %w", fs.ErrInvalid)
	// ErrNoRoute is a path or method the API does not serve.
	ErrNoRoute = errors.New("no such route")
)

// errorTable maps sentinel errors to codes and HTTP statuses. The first
// match wins, so more specific classes come before the generic ones they
// may also wrap (the order of cmd/forkspace's exit codes). It is the only
// place errors are interpreted; a code absent from a response is
// "internal".
var errorTable = []struct {
	err    error
	code   string
	status int
}{
	{context.Canceled, CodeCanceled, 499},
	{context.DeadlineExceeded, CodeTimeout, http.StatusGatewayTimeout},
	{ErrForbidden, CodeForbidden, http.StatusForbidden},
	{ErrNoRoute, CodeRouteNotFound, http.StatusNotFound},
	{ErrNotModified, CodeNotModified, http.StatusNotModified},
	{ErrPrecondition, CodePrecondition, http.StatusPreconditionFailed},
	{ErrRange, CodeRange, http.StatusRequestedRangeNotSatisfiable},
	{ErrTooLarge, CodeTooLarge, http.StatusRequestEntityTooLarge},
	{ErrBadRequest, CodeBadRequestBody, http.StatusBadRequest},
	{feed.ErrTooOld, CodeTooOld, http.StatusGone},
	{errdefs.ErrBusy, CodeBusy, http.StatusServiceUnavailable},
	{errdefs.ErrCorrupt, CodeCorrupt, http.StatusInternalServerError},
	{errdefs.ErrConflict, CodeConflict, http.StatusConflict},
	{errdefs.ErrQuota, CodeQuota, http.StatusInsufficientStorage},
	{errdefs.ErrReadOnly, CodeReadOnly, http.StatusForbidden},
	{errdefs.ErrUnauthenticated, CodeUnauthenticated, http.StatusUnauthorized},
	{fs.ErrPermission, CodePermission, http.StatusForbidden},
	{errdefs.ErrNotEmpty, CodeNotEmpty, http.StatusConflict},
	{errdefs.ErrStale, CodeStale, http.StatusConflict},
	{fs.ErrNotExist, CodeNotFound, http.StatusNotFound},
	{fs.ErrExist, CodeExists, http.StatusConflict},
	{errdefs.ErrNameTooLong, CodeNameTooLong, http.StatusBadRequest},
	{errdefs.ErrNotDir, CodeNotDir, http.StatusBadRequest},
	{errdefs.ErrIsDir, CodeIsDir, http.StatusBadRequest},
	{errdefs.ErrLoop, CodeLoop, http.StatusBadRequest},
	{fs.ErrInvalid, CodeInvalid, http.StatusBadRequest},
	{fs.ErrClosed, CodeClosed, http.StatusConflict},
	{errors.ErrUnsupported, CodeUnsupported, http.StatusNotImplemented},
}

// apiError is the JSON shape of every error response.
type apiError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Path    string `json:"path,omitempty"`
}

// classify returns the code and status of err.
func classify(err error) (string, int) {
	for _, e := range errorTable {
		if errors.Is(err, e.err) {
			return e.code, e.status
		}
	}
	return CodeInternal, http.StatusInternalServerError
}

// sentinel returns the error a code stands for (nil for unknown codes).
func sentinel(code string) error {
	for _, e := range errorTable {
		if e.code == code {
			return e.err
		}
	}
	return nil
}

// fail writes err as the JSON error response. An error of no known class
// (a full disk, a failing database) may name the server's files: the
// client is shown none of its host paths.
func fail(w http.ResponseWriter, r *http.Request, err error) {
	code, status := classify(err)
	e := apiError{Code: code, Message: err.Error()}
	if pe := (*fs.PathError)(nil); errors.As(err, &pe) {
		e.Path = pe.Path
	}
	if code == CodeInternal {
		e.Message = errdefs.Redact(e.Message)
		if strings.HasPrefix(e.Path, "/") {
			e.Path = ""
		}
	}
	writeError(w, r, status, e)
}

func writeError(w http.ResponseWriter, r *http.Request, status int, e apiError) {
	h := w.Header()
	for _, k := range []string{"ETag", "Last-Modified", "Content-Range", "Content-Disposition", "Accept-Ranges"} {
		h.Del(k)
	}
	h.Set("X-Content-Type-Options", "nosniff")
	b, _ := json.Marshal(e) // strings only: always encodes
	replyJSON(w, status, b, r.Method != http.MethodHead)
}

// Error is an error response of the API as a Client returns it. Its text
// is the server's message; errors.Is matches the sentinel its code names
// (fs.ErrNotExist for "not_found", errdefs.ErrQuota for "quota"…).
type Error struct {
	Status  int    `json:"-"` // HTTP status
	Code    string `json:"code"`
	Message string `json:"message"`
	Path    string `json:"path,omitempty"`
}

func (e *Error) Error() string { return e.Message }

// Unwrap returns the sentinel error of the code (nil if unknown).
func (e *Error) Unwrap() error { return sentinel(e.Code) }
