package s3test

import (
	"bytes"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strconv"
	"sync"
	"testing"
	"time"
)

// Fault is what Faults does to a request it picks.
type Fault int

const (
	// InternalError answers 500 InternalError without forwarding.
	InternalError Fault = iota
	// SlowDown answers 503 SlowDown (S3's throttling) without forwarding.
	SlowDown
	// LostAnswer forwards the request, then answers 500 InternalError
	// instead of the server's answer: the request took effect and the
	// client is told it failed.
	LostAnswer
	// Stall holds the request without forwarding it until the client
	// gives up (or StallLimit passes), then drops it.
	Stall
	// Truncate forwards the request and sends the server's headers with
	// only the first half of its body, then cuts the connection.
	Truncate
	// NotImplemented answers 501 NotImplemented without forwarding, as a
	// server that does not implement a header the request carries.
	NotImplemented
	// Corrupt forwards the request with one byte of its body flipped, as
	// a body damaged on the way.
	Corrupt
)

// StallLimit bounds how long a Stall holds a request.
const StallLimit = 10 * time.Second

// Faults is a reverse proxy in front of an S3 server that injects faults
// into the requests it is told to, on 127.0.0.1 until the test ends. Its
// methods are safe for concurrent use.
type Faults struct {
	// URL is the proxy's endpoint.
	URL   string
	proxy *httputil.ReverseProxy

	mu       sync.Mutex
	pending  map[string][]Fault // by method: the next requests' faults
	injected int
	delay    time.Duration
}

// StartFaults proxies to target ("http://host:port"), passing every
// request through until Inject says otherwise. The Host header stays the
// one the client signed.
func StartFaults(tb testing.TB, target string) *Faults {
	tb.Helper()
	u, err := url.Parse(target)
	if err != nil {
		tb.Fatal(err)
	}
	f := &Faults{proxy: httputil.NewSingleHostReverseProxy(u), pending: map[string][]Fault{}}
	srv := httptest.NewServer(http.HandlerFunc(f.serve))
	tb.Cleanup(srv.Close)
	f.URL = srv.URL
	return f
}

// Inject makes the next requests with this method ("GET", "PUT", "HEAD",
// "DELETE") meet faults, one fault per request, in order.
func (f *Faults) Inject(method string, faults ...Fault) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pending[method] = append(f.pending[method], faults...)
}

// Delay holds every request d before it is served, as an endpoint far
// away: a region's S3 answers a PUT in 10–50 ms, a server on loopback in
// one or two.
func (f *Faults) Delay(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.delay = d
}

// Injected is how many faults were injected so far.
func (f *Faults) Injected() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.injected
}

// Clear drops the faults not injected yet.
func (f *Faults) Clear() {
	f.mu.Lock()
	defer f.mu.Unlock()
	clear(f.pending)
}

// next returns the fault the next request with method meets, if any,
// and how long to hold it first.
func (f *Faults) next(method string) (Fault, bool, time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	q := f.pending[method]
	if len(q) == 0 {
		return 0, false, f.delay
	}
	f.pending[method] = q[1:]
	f.injected++
	return q[0], true, f.delay
}

func (f *Faults) serve(w http.ResponseWriter, r *http.Request) {
	fault, ok, delay := f.next(r.Method)
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-r.Context().Done():
			return
		}
	}
	if !ok {
		f.proxy.ServeHTTP(w, r)
		return
	}
	switch fault {
	case InternalError:
		s3Error(w, http.StatusInternalServerError, "InternalError", "injected fault")
	case SlowDown:
		s3Error(w, http.StatusServiceUnavailable, "SlowDown", "Please reduce your request rate.")
	case LostAnswer:
		rec := httptest.NewRecorder()
		f.proxy.ServeHTTP(rec, r)
		s3Error(w, http.StatusInternalServerError, "InternalError", "injected fault after the request took effect")
	case Corrupt:
		body, err := io.ReadAll(r.Body)
		if err != nil {
			return
		}
		if len(body) > 0 {
			body[len(body)/2] ^= 0xff
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		f.proxy.ServeHTTP(w, r)
	case NotImplemented:
		s3Error(w, http.StatusNotImplemented, "NotImplemented", "A header you provided implies functionality that is not implemented.")
	case Stall:
		// Read the body first: the server notices the client hanging up
		// only once it has.
		io.Copy(io.Discard, r.Body)
		select {
		case <-r.Context().Done():
		case <-time.After(StallLimit):
		}
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, err := hj.Hijack(); err == nil {
				c.Close()
			}
		}
	case Truncate:
		rec := httptest.NewRecorder()
		f.proxy.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.WriteHeader(rec.Code)
		w.Write(body[:len(body)/2])
		if fl, ok := w.(http.Flusher); ok {
			fl.Flush()
		}
		if hj, ok := w.(http.Hijacker); ok {
			if c, _, err := hj.Hijack(); err == nil {
				if tc, ok := c.(*net.TCPConn); ok {
					tc.SetLinger(0) // a reset, not a clean end of stream
				}
				c.Close()
			}
		}
	}
}

// s3Error writes an S3 error answer.
func s3Error(w http.ResponseWriter, status int, code, msg string) {
	var b bytes.Buffer
	fmt.Fprintf(&b, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>%s</Code><Message>%s</Message></Error>`, code, msg)
	w.Header().Set("Content-Type", "application/xml")
	w.Header().Set("Content-Length", strconv.Itoa(b.Len()))
	w.WriteHeader(status)
	w.Write(b.Bytes())
}
