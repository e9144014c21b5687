package gitmount_test

import (
	"errors"
	"io/fs"
	"path/filepath"
	"testing"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/internal/gittest"
	"github.com/forkspace/forkspace/internal/secrettest"
	"github.com/forkspace/forkspace/mount"
	"github.com/forkspace/forkspace/mount/gitmount"
	"github.com/forkspace/forkspace/mount/mounttest"
)

// TestWorkspace mounts a token-protected repository served by git
// http-backend at /src of a real workspace (SQLite + blob directory), with
// the token in the environment only: the tree lands with its modes and
// symlinks, a restart does not fetch again, and no file of the store holds
// the token.
func TestWorkspace(t *testing.T) {
	const token = "ws-git-token-never-persisted"
	ctx := t.Context()
	fx := gittest.NewFixture(t)
	srv := gittest.Serve(t, fx.Root, token)
	t.Setenv("GIT_TOKEN", token)
	drivers := mount.Drivers{"git+http": gitmount.New}
	spec, err := mount.ParseSpec("/src=git+"+srv.URL+"/"+fx.Name+"#main", drivers)
	if err != nil {
		t.Fatalf("parse spec: %v", err)
	}
	store := mounttest.NewStore(t)
	f := store.Create("ws")
	mgr := store.Attach(f, "ws", []mount.Spec{spec}, nil)
	if err := mgr.Index(ctx); err != nil {
		t.Fatalf("index: %v", err)
	}

	fi, err := f.Stat(ctx, "src/bin/run.sh")
	if err != nil || fi.Mode().Perm() != 0o755 {
		t.Fatalf("stat bin/run.sh = %v, %v; want mode 0755", fi, err)
	}
	if fi, err := f.Stat(ctx, "src/README.md"); err != nil || fi.Mode().Perm() != 0o644 {
		t.Fatalf("stat README.md = %v, %v; want mode 0644", fi, err)
	}
	if target, err := f.Readlink(ctx, "src/docs/up"); err != nil || target != "../README.md" {
		t.Fatalf("readlink docs/up = %q, %v", target, err)
	}
	if b, err := f.ReadFile(ctx, "src/link"); err != nil || string(b) != "v2\n" {
		t.Fatalf("read through the symlink = %q, %v", b, err)
	}
	if b, err := f.ReadFile(ctx, "src/docs/sub/deep.txt"); err != nil || string(b) != "deep\n" {
		t.Fatalf("read docs/sub/deep.txt = %q, %v", b, err)
	}
	if err := f.WriteFile(ctx, "src/README.md", []byte("x"), 0o644); !errors.Is(err, errdefs.ErrReadOnly) {
		t.Fatalf("write under the read-only git mount = %v, want errdefs.ErrReadOnly", err)
	}

	// Restart: the index is in the store, nothing is fetched again.
	if err := mgr.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	store.Reopen()
	f = store.Open("ws")
	mgr = store.Attach(f, "ws", []mount.Spec{spec}, nil)
	before := srv.Requests()
	if err := mgr.Index(ctx); err != nil {
		t.Fatalf("index after restart: %v", err)
	}
	if b, err := f.ReadFile(ctx, "src/docs/guide.md"); err != nil || string(b) != "# Guide\n" {
		t.Fatalf("read after restart = %q, %v", b, err)
	}
	if got := srv.Requests() - before; got != 0 {
		t.Fatalf("a restart cost %d requests to the git server, want 0", got)
	}

	secrettest.AbsentUnder(t, filepath.Dir(t.TempDir()), token)
}

// TestWorkspaceIndexErrors checks that a bad ref, a refused token or an
// unreachable server fails the index with a typed error and leaves nothing
// under the mount root.
func TestWorkspaceIndexErrors(t *testing.T) {
	fx := gittest.NewFixture(t)
	srv := gittest.Serve(t, fx.Root, "right")
	down := gittest.Serve(t, fx.Root, "")
	down.Close()
	tests := []struct {
		name, url, token string
		want             error
	}{
		{"bad ref", srv.URL + "/" + fx.Name + "#nope", "right", gitmount.ErrRefNotFound},
		{"bad subdir", srv.URL + "/" + fx.Name + "#main:nope", "right", gitmount.ErrRefNotFound},
		{"refused token", srv.URL + "/" + fx.Name, "wrong", fs.ErrPermission},
		{"unreachable", down.URL + "/" + fx.Name, "right", gitmount.ErrUnreachable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("GIT_TOKEN", tt.token)
			spec, err := mount.ParseSpec("/src=git+"+tt.url, mount.Drivers{"git+http": gitmount.New})
			if err != nil {
				t.Fatalf("parse spec: %v", err)
			}
			store := mounttest.NewStore(t)
			f := store.Create("ws")
			mgr := store.Attach(f, "ws", []mount.Spec{spec}, nil)
			if err := mgr.Index(t.Context()); !errors.Is(err, tt.want) {
				t.Fatalf("index = %v, want %v", err, tt.want)
			}
			if ents, err := f.ReadDir(t.Context(), "src"); len(ents) != 0 {
				t.Fatalf("a failed index left %v (%v) under /src", ents, err)
			}
		})
	}
}
