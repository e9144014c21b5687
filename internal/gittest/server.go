package gittest

import (
	"io"
	"net/http"
	"net/http/cgi"
	"net/http/httptest"
	"sync"
	"testing"
)

// TokenUser is the basic-auth user name Serve expects with a token (any
// name is accepted; the password is what is checked).
const TokenUser = "x-access-token"

// Server is `git http-backend` on loopback. Its methods are safe for
// concurrent use.
type Server struct {
	// URL is the base URL; a repository is at URL + "/" + name.
	URL  string
	http *httptest.Server

	mu       sync.Mutex
	requests int
}

// Serve serves every repository under root (GIT_PROJECT_ROOT, all exported)
// until the test ends. With a non-empty token, requests must carry HTTP
// basic auth whose password is token: none gets 401, a wrong one 403.
func Serve(tb testing.TB, root, token string) *Server {
	tb.Helper()
	backend := &cgi.Handler{
		Path: gitPath(tb),
		Args: []string{"http-backend"},
		Dir:  root,
		// http-backend explains 404s ("Not a git repository") on stderr.
		Stderr: io.Discard,
		Env: []string{
			"GIT_PROJECT_ROOT=" + root,
			"GIT_HTTP_EXPORT_ALL=1",
			"GIT_CONFIG_NOSYSTEM=1",
			"GIT_CONFIG_GLOBAL=/dev/null",
		},
	}
	s := &Server{}
	s.http = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests++
		s.mu.Unlock()
		if token != "" {
			_, pass, ok := r.BasicAuth()
			if !ok {
				w.Header().Set("WWW-Authenticate", `Basic realm="gittest"`)
				http.Error(w, "authentication required", http.StatusUnauthorized)
				return
			}
			if pass != token {
				http.Error(w, "bad token", http.StatusForbidden)
				return
			}
		}
		backend.ServeHTTP(w, r)
	}))
	s.URL = s.http.URL
	tb.Cleanup(s.http.Close)
	return s
}

// Close stops the server; later requests fail to connect.
func (s *Server) Close() { s.http.Close() }

// Requests is how many requests reached the server.
func (s *Server) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}
