package s3mount_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/internal/s3test"
	"github.com/forkspace/forkspace/mount"
	"github.com/forkspace/forkspace/mount/s3mount"
)

const bucket = "bucket"

// options points a mount at srv with the server's credentials.
func options(srv *s3test.Server, prefix string) s3mount.Options {
	return endpointOptions(srv.URL, prefix)
}

// endpointOptions points a mount at the server at url with the test
// credentials.
func endpointOptions(url, prefix string) s3mount.Options {
	return s3mount.Options{
		Bucket:      bucket,
		Prefix:      prefix,
		Endpoint:    url,
		PathStyle:   true,
		Region:      s3test.Region,
		Credentials: &s3mount.Credentials{AccessKeyID: s3test.AccessKey, SecretAccessKey: s3test.SecretKey},
		MaxAttempts: 1,
	}
}

func open(t testing.TB, o s3mount.Options) *s3mount.Mount {
	t.Helper()
	m, err := s3mount.Open(o)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return m
}

func paths(entries []mount.Entry) []string {
	var ps []string
	for _, e := range entries {
		ps = append(ps, e.Path)
	}
	return ps
}

func TestListFetchPutDelete(t *testing.T) {
	ctx := t.Context()
	srv := s3test.Start(t, bucket)
	srv.Seed(t, bucket, "p/a.txt", []byte("alpha"))
	srv.Seed(t, bucket, "p/d/b.txt", []byte("bravo!"))
	m := open(t, options(srv, "p"))

	entries, err := m.List(ctx)
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	if got, want := paths(entries), []string{"a.txt", "d/b.txt"}; !slices.Equal(got, want) {
		t.Fatalf("list = %v, want %v", got, want)
	}
	for _, e := range entries {
		if e.Version == "" || e.ModTime.IsZero() || e.Mode != 0o644 {
			t.Errorf("entry %+v lacks version, mtime or mode", e)
		}
	}
	if entries[1].Size != 6 {
		t.Errorf("size of d/b.txt = %d, want 6", entries[1].Size)
	}
	data, err := m.Fetch(ctx, "d/b.txt")
	if err != nil || string(data) != "bravo!" {
		t.Fatalf("fetch = %q, %v", data, err)
	}

	v, err := m.Put(ctx, "new/c.txt", []byte("charlie"), "")
	if err != nil || v == "" {
		t.Fatalf("put = %q, %v", v, err)
	}
	if got, ok := srv.Object(t, bucket, "p/new/c.txt"); !ok || string(got) != "charlie" {
		t.Fatalf("upstream after put = %q, %v", got, ok)
	}
	entries, err = m.List(ctx)
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	if i := slices.IndexFunc(entries, func(e mount.Entry) bool { return e.Path == "new/c.txt" }); i < 0 || entries[i].Version != v {
		t.Fatalf("listed version of new/c.txt differs from put's %q: %+v", v, entries)
	}

	if err := m.Delete(ctx, "a.txt", ""); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, ok := srv.Object(t, bucket, "p/a.txt"); ok {
		t.Fatal("p/a.txt still upstream after delete")
	}
	if err := m.Delete(ctx, "a.txt", ""); err != nil {
		t.Fatalf("delete of a missing object: %v", err)
	}
	if _, err := m.Fetch(ctx, "a.txt"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("fetch deleted = %v, want fs.ErrNotExist", err)
	}
	var pe *fs.PathError
	if _, err := m.Fetch(ctx, "a.txt"); !errors.As(err, &pe) || pe.Path != "a.txt" {
		t.Fatalf("fetch error %v is not a *fs.PathError on a.txt", err)
	}
}

func TestPrefixStripping(t *testing.T) {
	srv := s3test.Start(t, bucket)
	for _, k := range []string{"a", "a/x", "a/d/y", "ab/z", "a/dir/", "a//bad", "a/./dot", "top"} {
		srv.Seed(t, bucket, k, []byte(k))
	}
	tests := []struct {
		prefix string
		want   []string
	}{
		{"a", []string{"d/y", "x"}},
		{"a/", []string{"d/y", "x"}},
		{"/a/", []string{"d/y", "x"}},
		{"a/d", []string{"y"}},
		{"ab", []string{"z"}},
		{"missing", nil},
		// "a" is shadowed by the directory a/; invalid keys are skipped.
		{"", []string{"a/d/y", "a/x", "ab/z", "top"}},
		{"/", []string{"a/d/y", "a/x", "ab/z", "top"}},
	}
	for _, tt := range tests {
		t.Run(tt.prefix, func(t *testing.T) {
			entries, err := open(t, options(srv, tt.prefix)).List(t.Context())
			if err != nil {
				t.Fatalf("list: %v", err)
			}
			if got := paths(entries); !slices.Equal(got, tt.want) {
				t.Fatalf("list under %q = %v, want %v", tt.prefix, got, tt.want)
			}
		})
	}
	data, err := open(t, options(srv, "a/")).Fetch(t.Context(), "d/y")
	if err != nil || string(data) != "a/d/y" {
		t.Fatalf("fetch d/y under a/ = %q, %v", data, err)
	}
}

func TestInvalidPaths(t *testing.T) {
	srv := s3test.Start(t, bucket)
	m := open(t, options(srv, "p"))
	for _, rel := range []string{"", ".", "../x", "/abs", "a//b", "a/"} {
		if _, err := m.Fetch(t.Context(), rel); !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("fetch %q = %v, want fs.ErrInvalid", rel, err)
		}
		if _, err := m.Put(t.Context(), rel, nil, ""); !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("put %q = %v, want fs.ErrInvalid", rel, err)
		}
	}
	if srv.Total() != 0 {
		t.Fatalf("invalid paths reached the server %d times", srv.Total())
	}
}

func TestPaginationAndRequestCounts(t *testing.T) {
	srv := s3test.Start(t, bucket)
	const n, page = 2503, 100
	for i := range n {
		srv.Seed(t, bucket, fmt.Sprintf("p/%05d", i), []byte{byte(i)})
	}
	srv.Seed(t, bucket, "other/x", nil)
	o := options(srv, "p")
	o.PageSize = page
	m := open(t, o)

	entries, err := m.List(t.Context())
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	if len(entries) != n || entries[0].Path != "00000" || entries[n-1].Path != fmt.Sprintf("%05d", n-1) {
		t.Fatalf("listed %d entries (%v … %v), want %d", len(entries), entries[0].Path, entries[len(entries)-1].Path, n)
	}
	if got, want := srv.Count("GET", "/"+bucket), (n+page-1)/page; got != want || srv.Total() != want {
		t.Fatalf("listing %d keys cost %d LISTs (%d requests), want %d", n, got, srv.Total(), want)
	}

	srv.Reset()
	if _, err := m.Fetch(t.Context(), "00042"); err != nil {
		t.Fatalf("fetch: %v", err)
	}
	if got := srv.Count("GET", "/"+bucket+"/p/00042"); got != 1 || srv.Total() != 1 {
		t.Fatalf("a fetch cost %d GETs (%d requests), want 1", got, srv.Total())
	}
	srv.Reset()
	if _, err := m.Put(t.Context(), "00042", []byte("x"), entries[42].Version); err != nil {
		t.Fatalf("put: %v", err)
	}
	if err := m.Delete(t.Context(), "00043", ""); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if put, del := srv.Count("PUT", "/"+bucket+"/p/00042"), srv.Count("DELETE", "/"+bucket+"/p/00043"); put != 1 || del != 1 || srv.Total() != 2 {
		t.Fatalf("put+delete cost %d PUT, %d DELETE, %d requests; want 1, 1, 2", put, del, srv.Total())
	}
}

func TestPutIfMatch(t *testing.T) {
	ctx := t.Context()
	srv := s3test.Start(t, bucket)
	srv.Seed(t, bucket, "p/f", []byte("v1"))
	srv.Seed(t, bucket, "p/gone", []byte("soon deleted"))
	m := open(t, options(srv, "p"))
	entries, err := m.List(ctx)
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	seen := map[string]string{}
	for _, e := range entries {
		seen[e.Path] = e.Version
	}

	// Unchanged upstream: the conditional put succeeds and chains.
	v2, err := m.Put(ctx, "f", []byte("v2"), seen["f"])
	if err != nil {
		t.Fatalf("put over an unchanged object: %v", err)
	}
	if _, err := m.Put(ctx, "f", []byte("v3"), v2); err != nil {
		t.Fatalf("put with the version put returned: %v", err)
	}

	// Changed upstream since v2: conflict, upstream untouched.
	srv.Seed(t, bucket, "p/f", []byte("someone else"))
	if _, err := m.Put(ctx, "f", []byte("mine"), v2); !errors.Is(err, errdefs.ErrConflict) {
		t.Fatalf("put over a changed object = %v, want errdefs.ErrConflict", err)
	}
	if got, _ := srv.Object(t, bucket, "p/f"); string(got) != "someone else" {
		t.Fatalf("upstream after a conflicting put = %q", got)
	}

	// Deleted upstream: conflict too, nothing created.
	srv.Seed(t, bucket, "p/gone", nil)
	if err := open(t, options(srv, "p")).Delete(ctx, "gone", ""); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, err := m.Put(ctx, "gone", []byte("mine"), seen["gone"]); !errors.Is(err, errdefs.ErrConflict) {
		t.Fatalf("put over a deleted object = %v, want errdefs.ErrConflict", err)
	}
	if _, ok := srv.Object(t, bucket, "p/gone"); ok {
		t.Fatal("a conflicting put created the object")
	}

	// Unconditional put overwrites.
	if _, err := m.Put(ctx, "f", []byte("forced"), mount.Unconditional); err != nil {
		t.Fatalf("unconditional put: %v", err)
	}
}

func TestErrors(t *testing.T) {
	srv := s3test.Start(t, bucket)
	srv.Seed(t, bucket, "p/f", []byte("x"))
	wrongKey := options(srv, "p")
	wrongKey.Credentials = &s3mount.Credentials{AccessKeyID: "intruder", SecretAccessKey: "guess"}
	noBucket := options(srv, "p")
	noBucket.Bucket = "nosuchbucket"
	down := s3test.Start(t, bucket)
	down.Close()
	unreachable := options(down, "p")

	tests := []struct {
		name string
		o    s3mount.Options
		want error
	}{
		{"wrong credentials", wrongKey, fs.ErrPermission},
		{"missing bucket", noBucket, fs.ErrNotExist},
		{"unreachable endpoint", unreachable, s3mount.ErrUnreachable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := open(t, tt.o)
			if _, err := m.List(t.Context()); !errors.Is(err, tt.want) {
				t.Errorf("list = %v, want %v", err, tt.want)
			}
			if _, err := m.Fetch(t.Context(), "f"); !errors.Is(err, tt.want) {
				t.Errorf("fetch = %v, want %v", err, tt.want)
			}
			if _, err := m.Put(t.Context(), "f", []byte("y"), ""); !errors.Is(err, tt.want) {
				t.Errorf("put = %v, want %v", err, tt.want)
			}
		})
	}
	if _, err := s3mount.Open(s3mount.Options{}); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("open without a bucket = %v, want fs.ErrInvalid", err)
	}
}

func TestReadOnly(t *testing.T) {
	srv := s3test.Start(t, bucket)
	srv.Seed(t, bucket, "p/f", []byte("x"))
	o := options(srv, "p")
	o.ReadOnly = true
	m := open(t, o)
	if _, err := m.Put(t.Context(), "f", []byte("y"), ""); !errors.Is(err, errdefs.ErrReadOnly) {
		t.Errorf("put = %v, want errdefs.ErrReadOnly", err)
	}
	if err := m.Delete(t.Context(), "f", ""); !errors.Is(err, errdefs.ErrReadOnly) {
		t.Errorf("delete = %v, want errdefs.ErrReadOnly", err)
	}
	if got, _ := srv.Object(t, bucket, "p/f"); string(got) != "x" {
		t.Fatalf("read-only mount changed upstream: %q", got)
	}
}

// TestCredentialsFromEnvironment opens a mount from its URL, as the CLI does,
// with the credentials only in the environment, and checks the secret shows
// up in nothing the mount hands back.
func TestCredentialsFromEnvironment(t *testing.T) {
	srv := s3test.Start(t, bucket)
	srv.Seed(t, bucket, "p/f", []byte("x"))
	t.Setenv("AWS_ACCESS_KEY_ID", s3test.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", s3test.SecretKey)
	t.Setenv("AWS_SESSION_TOKEN", "")
	raw := "s3://" + bucket + "/p?path_style=true&mode=rw&endpoint=" + url.QueryEscape(srv.URL)
	m, opts, source, err := mount.ParseURL(raw, mount.Drivers{s3mount.Scheme: s3mount.New})
	if err != nil {
		t.Fatalf("parse url: %v", err)
	}
	if opts.Mode != mount.ReadWrite {
		t.Fatalf("mode = %q, want read-write", opts.Mode)
	}
	lazy := m.(mount.Lazy)
	entries, err := lazy.List(t.Context())
	if err != nil || len(entries) != 1 {
		t.Fatalf("list = %v, %v", entries, err)
	}
	var seen bytes.Buffer
	fmt.Fprintf(&seen, "%v %+v %#v %s", m, m, entries, source)
	if _, err := lazy.Fetch(t.Context(), "missing"); err != nil {
		seen.WriteString(err.Error())
	}
	if strings.Contains(seen.String(), s3test.SecretKey) {
		t.Fatalf("the secret leaked into %q", seen.String())
	}
	if c := (s3mount.Credentials{AccessKeyID: "id", SecretAccessKey: "hidden", SessionToken: "tok"}); strings.Contains(fmt.Sprintf("%v %+v %#v %s", c, c, c, c), "hidden") {
		t.Fatal("Credentials formatting shows the secret")
	}

	// Reopening from the persisted source finds the credentials in the
	// environment again; without mode=rw the mount refuses writes.
	if m, _, _, err = mount.ParseURL(source, mount.Drivers{s3mount.Scheme: s3mount.New}); err != nil {
		t.Fatalf("reopen from the persisted source %q: %v", source, err)
	}
	if _, err := m.(mount.Lazy).Fetch(t.Context(), "f"); err != nil {
		t.Fatalf("fetch after reopen: %v", err)
	}
	m, _, _, err = mount.ParseURL(strings.Replace(source, "mode=rw", "mode=ro", 1), mount.Drivers{s3mount.Scheme: s3mount.New})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.(mount.Writable).Put(t.Context(), "f", nil, ""); !errors.Is(err, errdefs.ErrReadOnly) {
		t.Fatalf("put through a read-only URL mount = %v, want errdefs.ErrReadOnly", err)
	}
}

func TestCanceled(t *testing.T) {
	srv := s3test.Start(t, bucket)
	srv.Seed(t, bucket, "p/f", []byte("x"))
	m := open(t, options(srv, "p"))
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := m.Fetch(ctx, "f"); !errors.Is(err, context.Canceled) || errors.Is(err, s3mount.ErrUnreachable) {
		t.Fatalf("fetch with a canceled context = %v, want context.Canceled only", err)
	}
	if _, err := m.List(ctx); !errors.Is(err, context.Canceled) || errors.Is(err, s3mount.ErrUnreachable) {
		t.Fatalf("list with a canceled context = %v, want context.Canceled only", err)
	}
}
