package bundlemount_test

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"io/fs"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forkspace/forkspace/mount"
	"github.com/forkspace/forkspace/mount/bundlemount"
	"github.com/forkspace/forkspace/mount/mounttest"
)

var files = map[string][]byte{"README.md": []byte("# skill\n"), "scripts/run.sh": []byte("#!/bin/sh\necho run\n"), "data/empty": {}}

func tarOf(t *testing.T, files map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	tw := tar.NewWriter(&buf)
	for p, b := range files {
		if err := tw.WriteHeader(&tar.Header{Name: p, Mode: 0o644, Size: int64(len(b)), Typeflag: tar.TypeReg}); err != nil {
			t.Fatal(err)
		}
		tw.Write(b)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func gzipOf(b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

func zipOf(t *testing.T, files map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for p, b := range files {
		w, err := zw.Create(p)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(b)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestConformance(t *testing.T) {
	archives := map[string]func(t *testing.T) []byte{
		"tar":    func(t *testing.T) []byte { return tarOf(t, files) },
		"tar.gz": func(t *testing.T) []byte { return gzipOf(tarOf(t, files)) },
		"zip":    func(t *testing.T) []byte { return zipOf(t, files) },
	}
	for name, build := range archives {
		t.Run(name+"/file", func(t *testing.T) {
			mounttest.Run(t, func(t *testing.T) (mount.Mount, mounttest.Fixture) {
				p := filepath.Join(t.TempDir(), "bundle."+name)
				if err := os.WriteFile(p, build(t), 0o644); err != nil {
					t.Fatal(err)
				}
				return bundlemount.New(p, nil), mounttest.Fixture{Files: files}
			})
		})
		t.Run(name+"/http", func(t *testing.T) {
			mounttest.Run(t, func(t *testing.T) (mount.Mount, mounttest.Fixture) {
				body := build(t)
				srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.Write(body) }))
				t.Cleanup(srv.Close)
				return bundlemount.New(srv.URL+"/bundle", srv.Client()), mounttest.Fixture{Files: files}
			})
		})
	}
}

func TestErrors(t *testing.T) {
	ctx := context.Background()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/missing":
			http.NotFound(w, r)
		case "/broken":
			http.Error(w, "boom", http.StatusBadGateway)
		case "/escape":
			w.Write(tarOf(t, map[string][]byte{"ok": []byte("1"), "../../etc/passwd": []byte("x")}))
		}
	}))
	defer srv.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	closedURL := closed.URL
	closed.Close()
	cases := []struct {
		source string
		want   error
	}{
		{srv.URL + "/missing", fs.ErrNotExist},
		{srv.URL + "/broken", mount.ErrUnavailable},
		{closedURL + "/x.tar", mount.ErrUnavailable},
		{srv.URL + "/escape", fs.ErrInvalid},
		{filepath.Join(t.TempDir(), "none.tar"), fs.ErrNotExist},
	}
	for _, c := range cases {
		r := mounttest.NewRecorder()
		err := bundlemount.New(c.source, nil).Materialize(ctx, r)
		if !errors.Is(err, c.want) {
			t.Errorf("%s: %v, want %v", c.source, err, c.want)
		}
	}
}

func TestDriver(t *testing.T) {
	p := filepath.Join(t.TempDir(), "b.zip")
	if err := os.WriteFile(p, zipOf(t, files), 0o644); err != nil {
		t.Fatal(err)
	}
	drivers := mount.Drivers{"bundle": bundlemount.Driver}
	// A secret in the URL is refused, never stored (the environment
	// carries credentials), and the message does not echo it.
	if _, _, _, err := mount.ParseURL("bundle://"+p+"?mode=ro&token=s3cret", drivers); !errors.Is(err, fs.ErrInvalid) || strings.Contains(err.Error(), "s3cret") {
		t.Fatalf("a URL with a token: %v", err)
	}
	m, opts, source, err := mount.ParseURL("bundle://"+p+"?mode=ro", drivers)
	if err != nil {
		t.Fatal(err)
	}
	if opts.Mode != mount.ReadOnly || source != "bundle://"+p+"?mode=ro" {
		t.Errorf("opts %+v source %q", opts, source)
	}
	r := mounttest.NewRecorder()
	if err := m.(mount.Eager).Materialize(context.Background(), r); err != nil || len(r.Files) != len(files) {
		t.Fatalf("materialize: %v, %d files", err, len(r.Files))
	}
}
