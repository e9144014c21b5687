package s3mount

import (
	"errors"
	"io/fs"
	"net/url"
	"strings"
	"testing"
)

func TestParseURL(t *testing.T) {
	tests := []struct {
		url     string
		want    Options
		wantErr string
	}{
		{url: "s3://b", want: Options{Bucket: "b"}},
		{url: "s3://b/a/c/", want: Options{Bucket: "b", Prefix: "/a/c/"}},
		{
			url:  "s3://bucket/prefix?endpoint=http://127.0.0.1:9000&region=eu-west-3&path_style=true&page_size=10&max_attempts=2",
			want: Options{Bucket: "bucket", Prefix: "/prefix", Endpoint: "http://127.0.0.1:9000", Region: "eu-west-3", PathStyle: true, PageSize: 10, MaxAttempts: 2},
		},
		{url: "s3:///prefix", wantErr: "missing bucket"},
		{url: "s3://AKIA:secret@b/p", wantErr: "credentials in the url"},
		{url: "s3://b/p?endpoint=http://AKIA:secret@127.0.0.1:9000", wantErr: "credentials in the url"},
		{url: "gs://b", wantErr: "scheme"},
		{url: "s3://b?endpoint=ftp://x", wantErr: "endpoint"},
		{url: "s3://b?endpoint=127.0.0.1:9000", wantErr: "endpoint"},
		{url: "s3://b?path_style=maybe", wantErr: "path_style"},
		{url: "s3://b?page_size=0", wantErr: "page_size"},
		{url: "s3://b?max_attempts=none", wantErr: "max_attempts"},
		{url: "s3://b?color=blue", wantErr: `unknown parameter "color"`},
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
				if strings.Contains(err.Error(), "secret") && strings.Contains(tt.url, "secret") && strings.Contains(err.Error(), ":secret@") {
					t.Fatalf("error %q repeats the credentials", err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("parse = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func TestCleanPrefix(t *testing.T) {
	for in, want := range map[string]string{"": "", "/": "", "a": "a/", "a/": "a/", "/a/b/": "a/b/", "//a//": "a/"} {
		if got := cleanPrefix(in); got != want {
			t.Errorf("cleanPrefix(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzParseURL checks that any URL either parses into a usable bucket or
// fails with fs.ErrInvalid, and never carries credentials through.
func FuzzParseURL(f *testing.F) {
	for _, s := range []string{"s3://b/p", "s3://u:p@b", "s3://b?endpoint=http://h&page_size=7", "s3://b?%zz", "x://"} {
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
		if o.Bucket == "" || u.User != nil || o.Credentials != nil {
			t.Fatalf("parse %q accepted %+v", s, o)
		}
		if _, err := Open(o); err != nil {
			t.Fatalf("open parsed %q: %v", s, err)
		}
	})
}
