package gitmount

import (
	"errors"
	"io/fs"
	"net/url"
	"strings"
	"testing"

	"github.com/forkspace/forkspace/mount"
)

func TestParseURL(t *testing.T) {
	tests := []struct {
		url     string
		want    Options
		wantErr string
	}{
		{url: "git+https://host/repo.git", want: Options{URL: "https://host/repo.git"}},
		{url: "git+https://host/repo.git#main", want: Options{URL: "https://host/repo.git", Ref: "main"}},
		{url: "git+https://host/repo.git#v1.0:docs/api", want: Options{URL: "https://host/repo.git", Ref: "v1.0", Subdir: "docs/api"}},
		{url: "git+https://host/repo.git#:docs", want: Options{URL: "https://host/repo.git", Subdir: "docs"}},
		{url: "git+http://127.0.0.1:8080/r.git?shallow=false", want: Options{URL: "http://127.0.0.1:8080/r.git", Full: true}},
		{url: "git+file:///srv/git/bare.git#v1.0", want: Options{URL: "file:///srv/git/bare.git", Ref: "v1.0"}},
		{url: "github://cloudflare/agents#main:src", want: Options{URL: "https://github.com/cloudflare/agents.git", Ref: "main", Subdir: "src"}},
		{url: "github://cloudflare/agents.git", want: Options{URL: "https://github.com/cloudflare/agents.git"}},
		{url: "github://cloudflare", wantErr: "github://OWNER/REPO"},
		{url: "github://a/b/c", wantErr: "github://OWNER/REPO"},
		{url: "git+ssh://host/r.git", wantErr: "known: git+https"},
		{url: "git+https://host/r.git?depth=3", wantErr: `unknown parameter "depth"`},
		{url: "git+https://host/r.git?shallow=sometimes", wantErr: "shallow"},
	}
	for _, tt := range tests {
		t.Run(tt.url, func(t *testing.T) {
			u, err := url.Parse(tt.url)
			if err != nil {
				t.Fatal(err)
			}
			got, err := parseURL(u)
			if tt.wantErr != "" {
				if !errors.Is(err, fs.ErrInvalid) || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("parse = %v, want fs.ErrInvalid mentioning %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("parse = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func TestNewRefusesReadWrite(t *testing.T) {
	u, _ := url.Parse("git+https://host/r.git")
	if _, err := New(u, mount.Options{Mode: mount.ReadWrite}); !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("new read-write = %v, want errors.ErrUnsupported", err)
	}
	u, _ = url.Parse("git+https://user:token@host/r.git")
	if _, err := New(u, mount.Options{}); !errors.Is(err, fs.ErrInvalid) || strings.Contains(err.Error(), "token") && strings.Contains(err.Error(), ":token@") {
		t.Fatalf("new with a password in the url = %v, want fs.ErrInvalid without the password", err)
	}
}

// FuzzParseURL checks that any URL either fails with fs.ErrInvalid or
// yields options Open accepts or refuses with fs.ErrInvalid — never a
// panic, never a password carried along.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{"git+https://h/r.git#main:docs", "github://o/r#:x", "git+file:///r#v1", "git+https://u:p@h/r", "git+http://h/r?shallow=0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		u, err := url.Parse(s)
		if err != nil {
			return
		}
		o, err := parseURL(u)
		if err != nil {
			if !errors.Is(err, fs.ErrInvalid) {
				t.Fatalf("parse %q = %v, not fs.ErrInvalid", s, err)
			}
			return
		}
		if o.Token != "" {
			t.Fatalf("parse %q yielded a token", s)
		}
		if _, err := Open(o); err != nil && !errors.Is(err, fs.ErrInvalid) {
			t.Fatalf("open %+v = %v, not fs.ErrInvalid", o, err)
		}
	})
}
