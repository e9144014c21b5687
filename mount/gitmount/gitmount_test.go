package gitmount_test

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os/exec"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/forkspace/forkspace/internal/gittest"
	"github.com/forkspace/forkspace/mount"
	"github.com/forkspace/forkspace/mount/gitmount"
)

// tree is a materialized tree in comparable form: path → "dir",
// "file 0755 <bytes>" or "symlink <target>".
type tree map[string]string

// recorder is a mount.WriteAPI that builds a tree.
type recorder struct {
	mu sync.Mutex
	t  tree
}

var _ mount.WriteAPI = (*recorder)(nil)

func (r *recorder) put(rel, v string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !fs.ValidPath(rel) || rel == "." {
		return &fs.PathError{Op: "write", Path: rel, Err: fs.ErrInvalid}
	}
	r.t[rel] = v
	return nil
}

func (r *recorder) WriteFile(rel string, data []byte, mode fs.FileMode) error {
	return r.put(rel, fmt.Sprintf("file %04o %s", mode.Perm(), data))
}
func (r *recorder) Mkdir(rel string, _ fs.FileMode) error { return r.put(rel, "dir") }
func (r *recorder) Symlink(target, rel string) error      { return r.put(rel, "symlink "+target) }

// archive is what `git archive` (git's own checkout of a tree) yields for
// treeish in the bare repository.
func archive(t *testing.T, bare, treeish string) tree {
	t.Helper()
	out, err := exec.Command("git", "-c", "tar.umask=022", "--git-dir", bare, "archive", "--format=tar", treeish).Output()
	if err != nil {
		t.Fatalf("git archive %s: %v", treeish, err)
	}
	want := tree{}
	tr := tar.NewReader(bytes.NewReader(out))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return want
		}
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimSuffix(h.Name, "/")
		switch h.Typeflag {
		case tar.TypeDir:
			want[name] = "dir"
		case tar.TypeSymlink:
			want[name] = "symlink " + h.Linkname
		case tar.TypeReg:
			data, _ := io.ReadAll(tr)
			want[name] = fmt.Sprintf("file %04o %s", fs.FileMode(h.Mode).Perm(), data)
		}
	}
}

func materialize(t *testing.T, o gitmount.Options) (tree, error) {
	t.Helper()
	m, err := gitmount.Open(o)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	r := &recorder{t: tree{}}
	err = m.Materialize(t.Context(), r)
	return r.t, err
}

func diff(got, want tree) string {
	var b strings.Builder
	for _, k := range slices.Sorted(maps.Keys(want)) {
		if got[k] != want[k] {
			fmt.Fprintf(&b, "%s: got %q, want %q\n", k, got[k], want[k])
		}
	}
	for _, k := range slices.Sorted(maps.Keys(got)) {
		if _, ok := want[k]; !ok {
			fmt.Fprintf(&b, "%s: unexpected %q\n", k, got[k])
		}
	}
	return b.String()
}

// TestMaterialize checks every ref form and subtrees against git archive,
// for a local bare repository opened in place, the same through a file://
// URL, and the repository served by git http-backend.
func TestMaterialize(t *testing.T) {
	fx := gittest.NewFixture(t)
	srv := gittest.Serve(t, fx.Root, "")
	sources := map[string]string{
		"local": fx.Bare(),
		"file":  "file://" + fx.Bare(),
		"http":  srv.URL + "/" + fx.Name,
	}
	tests := []struct {
		name, ref, subdir, treeish string
		full                       bool
	}{
		{name: "default", treeish: fx.Main},
		{name: "HEAD", ref: "HEAD", treeish: fx.Main},
		{name: "branch", ref: "main", treeish: fx.Main},
		{name: "other branch", ref: "feature", treeish: fx.Feature},
		{name: "full ref name", ref: "refs/heads/feature", treeish: fx.Feature},
		{name: "annotated tag", ref: "v1.0", treeish: fx.Initial},
		{name: "lightweight tag", ref: "light", treeish: fx.Initial},
		{name: "commit", ref: fx.Initial, treeish: fx.Initial},
		{name: "short commit", ref: fx.Main[:10], treeish: fx.Main},
		{name: "subdir", ref: "main", subdir: "docs", treeish: fx.Main + ":docs"},
		{name: "nested subdir", subdir: "/docs/sub/", treeish: fx.Main + ":docs/sub"},
		{name: "full history", ref: "feature", full: true, treeish: fx.Feature},
	}
	for src, u := range sources {
		for _, tt := range tests {
			t.Run(src+"/"+tt.name, func(t *testing.T) {
				got, err := materialize(t, gitmount.Options{URL: u, Ref: tt.ref, Subdir: tt.subdir, Full: tt.full})
				if err != nil {
					t.Fatalf("materialize: %v", err)
				}
				if d := diff(got, archive(t, fx.Bare(), tt.treeish)); d != "" {
					t.Fatalf("materialized tree differs from git archive %s:\n%s", tt.treeish, d)
				}
			})
		}
	}
	// The fixture has what the comparison is meant to cover.
	got, _ := materialize(t, gitmount.Options{URL: fx.Bare()})
	for p, want := range map[string]string{"bin/run.sh": "file 0755 #!/bin/sh\necho run\n", "README.md": "file 0644 v2\n", "link": "symlink README.md", "docs/up": "symlink ../README.md", "docs/sub": "dir"} {
		if got[p] != want {
			t.Errorf("%s = %q, want %q", p, got[p], want)
		}
	}
}

func TestErrors(t *testing.T) {
	fx := gittest.NewFixture(t)
	open := gittest.Serve(t, fx.Root, "")
	down := gittest.Serve(t, fx.Root, "")
	down.Close()
	remote := open.URL + "/" + fx.Name
	tests := []struct {
		name string
		o    gitmount.Options
		want []error
	}{
		{"local bad ref", gitmount.Options{URL: fx.Bare(), Ref: "nope"}, []error{fs.ErrNotExist, gitmount.ErrRefNotFound}},
		{"remote bad ref", gitmount.Options{URL: remote, Ref: "nope"}, []error{fs.ErrNotExist, gitmount.ErrRefNotFound}},
		{"remote unknown commit", gitmount.Options{URL: remote, Ref: "0123456789abcdef"}, []error{fs.ErrNotExist, gitmount.ErrRefNotFound}},
		{"local bad subdir", gitmount.Options{URL: fx.Bare(), Subdir: "nope"}, []error{fs.ErrNotExist, gitmount.ErrRefNotFound}},
		{"remote subdir is a file", gitmount.Options{URL: remote, Subdir: "README.md"}, []error{fs.ErrNotExist, gitmount.ErrRefNotFound}},
		{"local missing repository", gitmount.Options{URL: fx.Root + "/missing.git"}, []error{fs.ErrNotExist}},
		{"remote missing repository", gitmount.Options{URL: open.URL + "/missing.git"}, []error{fs.ErrNotExist}},
		{"unreachable server", gitmount.Options{URL: down.URL + "/" + fx.Name}, []error{gitmount.ErrUnreachable}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := materialize(t, tt.o)
			for _, w := range tt.want {
				if !errors.Is(err, w) {
					t.Errorf("materialize = %v, want %v", err, w)
				}
			}
			if len(got) != 0 {
				t.Errorf("a failed materialize wrote %d entries", len(got))
			}
		})
	}
}

func TestOpenErrors(t *testing.T) {
	for _, o := range []gitmount.Options{
		{},
		{URL: "ssh://host/repo.git"},
		{URL: "https://user:pass@host/repo.git"},
		{URL: "https:///repo.git"},
		{URL: "file://host/repo.git"},
		{URL: "/repo.git", Subdir: "../up"},
	} {
		if _, err := gitmount.Open(o); !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("open %+v = %v, want fs.ErrInvalid", o, err)
		}
	}
}

func TestToken(t *testing.T) {
	const token = "s3cr3t-git-token-never-persisted"
	fx := gittest.NewFixture(t)
	srv := gittest.Serve(t, fx.Root, token)
	remote := srv.URL + "/" + fx.Name
	want := archive(t, fx.Bare(), fx.Main)
	t.Setenv("GIT_TOKEN", "")
	t.Setenv("GITHUB_TOKEN", "")

	check := func(t *testing.T, o gitmount.Options, wantErr error) {
		t.Helper()
		got, err := materialize(t, o)
		if wantErr != nil {
			if !errors.Is(err, wantErr) {
				t.Fatalf("materialize = %v, want %v", err, wantErr)
			}
			if strings.Contains(err.Error(), token) {
				t.Fatalf("the error shows the token: %v", err)
			}
			return
		}
		if err != nil {
			t.Fatalf("materialize: %v", err)
		}
		if d := diff(got, want); d != "" {
			t.Fatalf("tree differs:\n%s", d)
		}
	}
	t.Run("none", func(t *testing.T) { check(t, gitmount.Options{URL: remote}, fs.ErrPermission) })
	t.Run("wrong", func(t *testing.T) { check(t, gitmount.Options{URL: remote, Token: "wrong"}, fs.ErrPermission) })
	t.Run("option", func(t *testing.T) { check(t, gitmount.Options{URL: remote, Token: token}, nil) })
	t.Run("GIT_TOKEN", func(t *testing.T) {
		t.Setenv("GIT_TOKEN", token)
		check(t, gitmount.Options{URL: remote}, nil)
	})
	t.Run("GITHUB_TOKEN stays with github.com", func(t *testing.T) {
		t.Setenv("GITHUB_TOKEN", token)
		check(t, gitmount.Options{URL: remote}, fs.ErrPermission)
	})
	t.Run("url", func(t *testing.T) {
		t.Setenv("GIT_TOKEN", token)
		m, _, source, err := mount.ParseURL("git+"+remote+"#main:docs", mount.Drivers{"git+http": gitmount.New})
		if err != nil {
			t.Fatalf("parse url: %v", err)
		}
		r := &recorder{t: tree{}}
		if err := m.(mount.Eager).Materialize(t.Context(), r); err != nil {
			t.Fatalf("materialize: %v", err)
		}
		if d := diff(r.t, archive(t, fx.Bare(), "main:docs")); d != "" {
			t.Fatalf("tree differs:\n%s", d)
		}
		if s := fmt.Sprintf("%s %v %+v %#v", source, m, m, m); strings.Contains(s, token) {
			t.Fatalf("the token shows in %q", s)
		}
	})
}

func TestCanceled(t *testing.T) {
	fx := gittest.NewFixture(t)
	srv := gittest.Serve(t, fx.Root, "")
	for _, u := range []string{fx.Bare(), srv.URL + "/" + fx.Name} {
		m, err := gitmount.Open(gitmount.Options{URL: u})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithCancel(t.Context())
		cancel()
		r := &recorder{t: tree{}}
		if err := m.Materialize(ctx, r); !errors.Is(err, context.Canceled) || errors.Is(err, gitmount.ErrUnreachable) {
			t.Errorf("materialize %s with a canceled context = %v, want context.Canceled only", u, err)
		}
		if len(r.t) != 0 {
			t.Errorf("a canceled materialize of %s wrote %d entries", u, len(r.t))
		}
	}
}
