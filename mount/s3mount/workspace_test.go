package s3mount_test

import (
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"path/filepath"
	"sync"
	"testing"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/internal/s3test"
	"github.com/forkspace/forkspace/internal/secrettest"
	"github.com/forkspace/forkspace/mount"
	"github.com/forkspace/forkspace/mount/mounttest"
	"github.com/forkspace/forkspace/mount/s3mount"
)

// drivers is what the CLI wires for s3:// URLs.
var drivers = mount.Drivers{s3mount.Scheme: s3mount.New}

// workspaceSpec is the spec of "/data" over srv's bucket/p, read-write,
// with a manual write-back and the credentials in the environment only.
func workspaceSpec(t testing.TB, srv *s3test.Server, query string) mount.Spec {
	t.Helper()
	spec, err := mount.ParseSpec("/data=s3://"+bucket+"/p?path_style=true&mode=rw&writeback=manual&endpoint="+url.QueryEscape(srv.URL)+query, drivers)
	if err != nil {
		t.Fatalf("parse spec: %v", err)
	}
	return spec
}

// TestWorkspace runs the S3 mount in a real workspace (SQLite + blob
// directory): requests counted at the server for index, first read,
// reads after hydration (also after a restart) and write-back, the
// If-Match conflict reaching the hook, and no trace of the credentials in
// any file of the store.
func TestWorkspace(t *testing.T) {
	ctx := t.Context()
	t.Setenv("AWS_ACCESS_KEY_ID", s3test.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", s3test.SecretKey)
	srv := s3test.Start(t, bucket)
	const n, page = 250, 100
	for i := range n {
		srv.Seed(t, bucket, fmt.Sprintf("p/d%d/f%03d.txt", i%5, i), []byte(fmt.Sprintf("file %d\n", i)))
	}

	var mu sync.Mutex
	var conflicts []mount.Conflict
	hook := func(c mount.Conflict) mount.Resolution {
		mu.Lock()
		defer mu.Unlock()
		conflicts = append(conflicts, c)
		return mount.Accept
	}
	store := mounttest.NewStore(t)
	f := store.Create("ws")
	spec := workspaceSpec(t, srv, fmt.Sprintf("&page_size=%d", page))
	mgr := store.Attach(f, "ws", []mount.Spec{spec}, hook)

	// Index: one LIST per page and nothing else.
	if err := mgr.Index(ctx); err != nil {
		t.Fatalf("index: %v", err)
	}
	if got, want := srv.Total(), (n+page-1)/page; got != want || srv.Count("GET", "/"+bucket) != want {
		t.Fatalf("index cost %d requests, want %d LISTs", got, want)
	}

	// First read: one GET. Later reads: none.
	srv.Reset()
	const name = "data/d2/f007.txt"
	for range 3 {
		b, err := f.ReadFile(ctx, name)
		if err != nil || string(b) != "file 7\n" {
			t.Fatalf("read %s = %q, %v", name, b, err)
		}
	}
	if got := srv.Count("GET", "/"+bucket+"/p/d2/f007.txt"); got != 1 || srv.Total() != 1 {
		t.Fatalf("three reads cost %d GETs (%d requests), want 1", got, srv.Total())
	}

	// Write-back: three writes, one PUT on Flush.
	srv.Reset()
	for i := range 3 {
		if err := f.WriteFile(ctx, "data/d0/new.txt", []byte(fmt.Sprintf("draft %d", i)), 0o644); err != nil {
			t.Fatalf("write: %v", err)
		}
	}
	if srv.Total() != 0 {
		t.Fatalf("manual write-back reached the server before Flush (%d requests)", srv.Total())
	}
	if err := mgr.Flush(ctx, "/data"); err != nil {
		t.Fatalf("flush: %v", err)
	}
	if got := srv.Count("PUT", "/"+bucket+"/p/d0/new.txt"); got != 1 || srv.Total() != 1 {
		t.Fatalf("a burst of 3 writes cost %d PUTs (%d requests), want 1", got, srv.Total())
	}
	if b, _ := srv.Object(t, bucket, "p/d0/new.txt"); string(b) != "draft 2" {
		t.Fatalf("upstream after flush = %q, want the last write", b)
	}

	// A removal reaches the source as one DELETE (and the LISTs the
	// manager spends looking for what lived below the path).
	srv.Reset()
	if err := f.Remove(ctx, "data/d3/f003.txt"); err != nil {
		t.Fatalf("remove: %v", err)
	}
	if err := mgr.Flush(ctx, "/data"); err != nil {
		t.Fatalf("flush: %v", err)
	}
	if got := srv.Count("DELETE", "/"+bucket+"/p/d3/f003.txt"); got != 1 {
		t.Fatalf("a removal cost %d DELETEs, want 1", got)
	}
	if _, ok := srv.Object(t, bucket, "p/d3/f003.txt"); ok {
		t.Fatal("removed file still upstream")
	}
	t.Logf("a flushed removal cost %d requests (%d LISTs)", srv.Total(), srv.Count("GET", "/"+bucket))

	// Upstream changed since the index: the write-back is a conflict, not
	// an overwrite.
	srv.Seed(t, bucket, "p/d2/f007.txt", []byte("changed upstream"))
	if err := f.WriteFile(ctx, name, []byte("mine"), 0o644); err != nil {
		t.Fatalf("write: %v", err)
	}
	if err := mgr.Flush(ctx, "/data"); !errors.Is(err, errdefs.ErrConflict) {
		t.Fatalf("flush over an upstream change = %v, want errdefs.ErrConflict", err)
	}
	if b, _ := srv.Object(t, bucket, "p/d2/f007.txt"); string(b) != "changed upstream" {
		t.Fatalf("upstream overwritten: %q", b)
	}
	mu.Lock()
	if len(conflicts) != 1 || conflicts[0].Reason != "upstream-changed" || conflicts[0].RelPath != "d2/f007.txt" {
		t.Fatalf("conflicts = %+v, want one upstream-changed on d2/f007.txt", conflicts)
	}
	mu.Unlock()

	// Restart: no re-list, hydrated files read locally, stubs fetch once.
	if err := mgr.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	store.Reopen()
	f = store.Open("ws")
	mgr = store.Attach(f, "ws", []mount.Spec{workspaceSpec(t, srv, "")}, hook)
	srv.Reset()
	if err := mgr.Index(ctx); err != nil {
		t.Fatalf("index after restart: %v", err)
	}
	if b, err := f.ReadFile(ctx, "data/d0/new.txt"); err != nil || string(b) != "draft 2" {
		t.Fatalf("read after restart = %q, %v", b, err)
	}
	if srv.Total() != 0 {
		t.Fatalf("a restart and a read of hydrated data cost %d requests, want 0", srv.Total())
	}
	if b, err := f.ReadFile(ctx, "data/d1/f001.txt"); err != nil || string(b) != "file 1\n" {
		t.Fatalf("read stub after restart = %q, %v", b, err)
	}
	if srv.Total() != 1 {
		t.Fatalf("a stub read after restart cost %d requests, want 1", srv.Total())
	}

	// Refresh: one LIST per page; a changed object is fetched again on
	// its next read, a removed one is gone.
	srv.Seed(t, bucket, "p/d1/f001.txt", []byte("refreshed"))
	srv.Reset()
	if err := mgr.Refresh(ctx, "/data"); err != nil {
		t.Fatalf("refresh: %v", err)
	}
	if got := srv.Count("GET", "/"+bucket); got != srv.Total() || got < 1 {
		t.Fatalf("refresh cost %d requests, %d of them LISTs; want LISTs only", srv.Total(), got)
	}
	srv.Reset()
	if b, err := f.ReadFile(ctx, "data/d1/f001.txt"); err != nil || string(b) != "refreshed" || srv.Total() != 1 {
		t.Fatalf("read after refresh = %q, %v (%d requests); want the new bytes with one GET", b, err, srv.Total())
	}

	// The credentials were only ever in the environment: no file of the
	// store holds them (SQLite database, WAL, blobs).
	secrettest.AbsentUnder(t, filepath.Dir(t.TempDir()), s3test.SecretKey, s3test.AccessKey)
}

// TestWorkspaceIndexErrors checks that an index against an unreachable
// endpoint or with refused credentials fails with the driver's typed error
// and leaves nothing under the mount root.
func TestWorkspaceIndexErrors(t *testing.T) {
	srv := s3test.Start(t, bucket)
	srv.Seed(t, bucket, "p/f", []byte("x"))
	down := s3test.Start(t, bucket)
	down.Close()
	tests := []struct {
		name    string
		srv     *s3test.Server
		keyID   string
		wantErr error
	}{
		{"unreachable", down, s3test.AccessKey, s3mount.ErrUnreachable},
		{"refused credentials", srv, "intruder", fs.ErrPermission},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Setenv("AWS_ACCESS_KEY_ID", tt.keyID)
			t.Setenv("AWS_SECRET_ACCESS_KEY", s3test.SecretKey)
			store := mounttest.NewStore(t)
			f := store.Create("ws")
			mgr := store.Attach(f, "ws", []mount.Spec{workspaceSpec(t, tt.srv, "&max_attempts=1")}, nil)
			if err := mgr.Index(t.Context()); !errors.Is(err, tt.wantErr) {
				t.Fatalf("index = %v, want %v", err, tt.wantErr)
			}
			if ents, err := f.ReadDir(t.Context(), "data"); len(ents) != 0 {
				t.Fatalf("a failed index left %v (%v) under /data", ents, err)
			}
		})
	}
}
