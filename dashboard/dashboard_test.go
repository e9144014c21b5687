package dashboard

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
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
		{"GET", "/ui/", 200, `<script type="module" src="app.js?v=`},
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

// TestCaching: the page names each asset with the hash of its bytes; an
// asset asked for with that hash is immutable for a year, without it (or
// with another) revalidated; the page is always revalidated, and an
// If-None-Match with the current ETag is 304 for both.
func TestCaching(t *testing.T) {
	h := Handler()
	get := func(path string, hdr ...string) *httptest.ResponseRecorder {
		t.Helper()
		r := httptest.NewRequest(http.MethodGet, path, nil)
		for i := 0; i+1 < len(hdr); i += 2 {
			r.Header.Set(hdr[i], hdr[i+1])
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		return w
	}
	pg := get("/ui/")
	if cc := pg.Header().Get("Cache-Control"); cc != "no-cache" {
		t.Errorf("page: Cache-Control %q, want no-cache", cc)
	}
	if st := get("/ui/", "If-None-Match", pg.Header().Get("ETag")).Code; st != http.StatusNotModified {
		t.Errorf("page revalidated with its ETag: %d, want 304", st)
	}
	for _, name := range []string{"app.js", "app.css"} {
		plain := get("/ui/" + name)
		version := strings.Trim(plain.Header().Get("ETag"), `"`)
		sum := sha256.Sum256(plain.Body.Bytes())
		if version != hex.EncodeToString(sum[:8]) {
			t.Errorf("%s: ETag %q is not the hash of its bytes", name, version)
		}
		if !strings.Contains(pg.Body.String(), `"`+name+"?v="+version+`"`) {
			t.Errorf("the page does not name %s?v=%s", name, version)
		}
		for _, tc := range []struct{ query, cc string }{
			{"", "no-cache"},
			{"?v=" + version, "public, max-age=31536000, immutable"},
			{"?v=0123456789abcdef", "no-cache"}, // an older binary's
		} {
			w := get("/ui/" + name + tc.query)
			if cc := w.Header().Get("Cache-Control"); w.Code != 200 || cc != tc.cc || !bytes.Equal(w.Body.Bytes(), plain.Body.Bytes()) {
				t.Errorf("%s%s: %d, Cache-Control %q; want 200, %q and its bytes", name, tc.query, w.Code, cc, tc.cc)
			}
		}
		if st := get("/ui/"+name, "If-None-Match", `"`+version+`"`).Code; st != http.StatusNotModified {
			t.Errorf("%s revalidated with its ETag: %d, want 304", name, st)
		}
	}
}
