package dashboard

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"strings"
	"time"
)

//go:embed static
var static embed.FS

// Prefix is the path the dashboard is served under.
const Prefix = "/ui/"

// page is the file served at Prefix itself.
const page = "index.html"

// file is one embedded file as served: its bytes (the page's with its
// assets' URLs versioned), its strong ETag and, for an asset, the
// version its URL carries (?v=…).
type file struct {
	body    []byte
	etag    string
	version string
}

// Handler serves the dashboard under Prefix: the page at Prefix itself
// and its assets beside it. The page names each asset with a hash of its
// bytes (app.js?v=HASH), and a request carrying the current hash is
// cacheable for a year and immutable: a reload paints from the cached
// script and style sheet without asking the server for them, and an
// upgraded binary's page names new URLs. The page itself, and an asset
// asked for without its current hash, is revalidated on every load
// (Cache-Control: no-cache, answered 304 by ETag).
func Handler() http.Handler {
	files := load()
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		name := strings.TrimPrefix(r.URL.Path, Prefix)
		if name == "" {
			name = page
		}
		f, ok := files[name]
		if !ok {
			http.NotFound(w, r)
			return
		}
		h := w.Header()
		h.Set("Cache-Control", "no-cache")
		if v := r.URL.Query().Get("v"); v != "" && v == f.version {
			h.Set("Cache-Control", "public, max-age=31536000, immutable")
		}
		h.Set("ETag", f.etag)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' blob: data:; object-src 'none'; frame-ancestors 'none'; base-uri 'none'; form-action 'self'")
		http.ServeContent(w, r, name, time.Time{}, bytes.NewReader(f.body))
	})
}

// load reads the embedded files and versions the page's references to
// the assets (src="app.js" becomes src="app.js?v=HASH").
func load() map[string]file {
	files := map[string]file{}
	err := fs.WalkDir(static, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := static.ReadFile(p)
		files[strings.TrimPrefix(p, "static/")] = file{body: body}
		return err
	})
	if err != nil {
		panic(err) // the embedded directory is read at build time
	}
	var refs []string
	for name, f := range files {
		if name == page {
			continue
		}
		f.version = hash(f.body)
		f.etag = `"` + f.version + `"`
		files[name] = f
		refs = append(refs, `"`+name+`"`, `"`+name+"?v="+f.version+`"`)
	}
	p := files[page]
	p.body = []byte(strings.NewReplacer(refs...).Replace(string(p.body)))
	p.etag = `"` + hash(p.body) + `"`
	files[page] = p
	return files
}

// hash names a file's bytes (the first 16 hex digits of their SHA-256).
func hash(b []byte) string {
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:8])
}
