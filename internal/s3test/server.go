package s3test

import (
	"bytes"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"
)

// Credentials the server accepts; any other access key gets AccessDenied.
const (
	AccessKey = "s3test-access-key"
	SecretKey = "s3test-secret-key-do-not-persist"
	Region    = "us-east-1"
)

// Server is a running S3-compatible server. Its methods are safe for
// concurrent use.
type Server struct {
	// URL is the endpoint ("http://127.0.0.1:port").
	URL     string
	backend *s3mem.Backend
	http    *httptest.Server

	mu     sync.Mutex
	counts map[string]int
}

// Start serves the given buckets (created empty) on 127.0.0.1 until the
// test ends.
func Start(tb testing.TB, buckets ...string) *Server {
	tb.Helper()
	s := &Server{backend: s3mem.New(), counts: map[string]int{}}
	for _, b := range buckets {
		if err := s.backend.CreateBucket(b); err != nil {
			tb.Fatalf("create bucket %s: %v", b, err)
		}
	}
	faker := gofakes3.New(s.backend, gofakes3.WithoutVersioning())
	s.http = httptest.NewServer(s.middleware(faker.Server()))
	s.URL = s.http.URL
	tb.Cleanup(s.http.Close)
	return s
}

// Close stops the server; later requests fail to connect.
func (s *Server) Close() { s.http.Close() }

// middleware counts the request and rejects an unknown access key with the
// error S3 sends for it.
func (s *Server) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.counts[r.Method+" "+r.URL.Path]++
		s.mu.Unlock()
		if !strings.Contains(r.Header.Get("Authorization"), "Credential="+AccessKey+"/") {
			w.Header().Set("Content-Type", "application/xml")
			w.WriteHeader(http.StatusForbidden)
			fmt.Fprint(w, `<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>`)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// Seed stores an object without going through HTTP (not counted).
func (s *Server) Seed(tb testing.TB, bucket, key string, data []byte) {
	tb.Helper()
	if _, err := s.backend.PutObject(bucket, key, map[string]string{}, bytes.NewReader(data), int64(len(data)), nil); err != nil {
		tb.Fatalf("seed %s/%s: %v", bucket, key, err)
	}
}

// Object returns an object's bytes, read without HTTP (not counted), and
// whether it exists.
func (s *Server) Object(tb testing.TB, bucket, key string) ([]byte, bool) {
	tb.Helper()
	obj, err := s.backend.GetObject(bucket, key, nil)
	if gofakes3.HasErrorCode(err, gofakes3.ErrNoSuchKey) {
		return nil, false
	}
	if err != nil {
		tb.Fatalf("get %s/%s: %v", bucket, key, err)
	}
	defer obj.Contents.Close()
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(obj.Contents); err != nil {
		tb.Fatalf("read %s/%s: %v", bucket, key, err)
	}
	return buf.Bytes(), true
}

// Count is how many requests with this method reached path (which is
// "/bucket" or "/bucket/key").
func (s *Server) Count(method, path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.counts[method+" "+path]
}

// Total is how many requests reached the server.
func (s *Server) Total() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, c := range s.counts {
		n += c
	}
	return n
}

// Reset zeroes the counters.
func (s *Server) Reset() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.counts)
}
