package dashboard

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHandler(t *testing.T) {
	h := Handler()
	for _, tc := range []struct {
		method, path string
		status       int
		body         string
	}{
		{"GET", "/ui/", 200, `<script type="module" src="app.js">`},
		{"GET", "/ui/app.js", 200, "function h(tag"},
		{"HEAD", "/ui/app.css", 200, ""},
		{"GET", "/ui/missing.js", 404, ""},
		{"GET", "/ui/../dashboard.go", 404, ""},
		{"POST", "/ui/", 405, ""},
	} {
		w := httptest.NewRecorder()
		h.ServeHTTP(w, httptest.NewRequest(tc.method, tc.path, nil))
		if w.Code != tc.status {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.path, w.Code, tc.status)
		}
		if !strings.Contains(w.Body.String(), tc.body) {
			t.Errorf("%s %s: body lacks %q", tc.method, tc.path, tc.body)
		}
		if tc.status == 200 {
			if csp := w.Header().Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'self'") || strings.Contains(csp, "unsafe-inline") {
				t.Errorf("%s %s: Content-Security-Policy %q", tc.method, tc.path, csp)
			}
			if w.Header().Get("X-Content-Type-Options") != "nosniff" {
				t.Errorf("%s %s: no nosniff", tc.method, tc.path)
			}
		}
	}
	w := httptest.NewRecorder()
	h.ServeHTTP(w, httptest.NewRequest(http.MethodGet, "/ui/app.js", nil))
	if ct := w.Header().Get("Content-Type"); !strings.Contains(ct, "javascript") {
		t.Errorf("app.js served as %q", ct)
	}
}
