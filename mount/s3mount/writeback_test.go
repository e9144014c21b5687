package s3mount_test

import (
	"errors"
	"fmt"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/mount/s3mount"
	"io/fs"
	"net"
	"net/url"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/forkspace/forkspace/internal/s3test"
	"github.com/forkspace/forkspace/mount"
	"github.com/forkspace/forkspace/mount/mounttest"
	"github.com/forkspace/forkspace/vfs"
)

// The write-back tests run against versitygw: a real S3 gateway that
// checks signatures and honours conditional requests (gofakes3 does
// neither).

// versitySpec is "/data" over srv's bucket/p, read-write, manual
// write-back, the root credentials in the environment.
func versitySpec(t *testing.T, srv *s3test.Versity, query string) mount.Spec {
	t.Helper()
	t.Setenv("AWS_ACCESS_KEY_ID", s3test.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", s3test.SecretKey)
	spec, err := mount.ParseSpec("/data=s3://"+bucket+"/p?path_style=true&mode=rw&writeback=manual&max_attempts=1&endpoint="+url.QueryEscape(srv.URL)+query, drivers)
	if err != nil {
		t.Fatalf("parse spec: %v", err)
	}
	return spec
}

func write(t *testing.T, f *vfs.FS, p, data string) {
	t.Helper()
	if err := f.WriteFile(t.Context(), p, []byte(data), 0o644); err != nil {
		t.Fatalf("write %s: %v", p, err)
	}
}

// TestForkNeverWritesToParentSource: a fork's writes and deletes under a
// read-write mount stay in the fork, also when a new process (a new
// Manager) flushes them right after opening the fork, before any index.
func TestForkNeverWritesToParentSource(t *testing.T) {
	ctx := t.Context()
	srv := s3test.StartVersity(t, bucket)
	srv.Seed(t, bucket, "p/keep.txt", []byte("parent's"))
	spec := versitySpec(t, srv, "")
	store := mounttest.NewStore(t)
	parent := store.Create("parent")
	pm := store.Attach(parent, "parent", []mount.Spec{spec}, nil)
	if err := pm.Index(ctx); err != nil {
		t.Fatal(err)
	}
	child := store.Fork(parent, "parent", "child")
	cm := store.Attach(child, "child", []mount.Spec{spec}, nil)
	write(t, child, "data/leak.txt", "x")
	if err := child.Remove(ctx, "data/keep.txt"); err != nil {
		t.Fatal(err)
	}
	if err := cm.Close(); err != nil {
		t.Fatal(err)
	}
	// The next command on the fork: a new manager flushes at once.
	cm = store.Attach(child, "child", []mount.Spec{spec}, nil)
	if err := cm.Flush(ctx, ""); err != nil {
		t.Fatalf("flush in the fork: %v", err)
	}
	// And after a refresh in the fork, still local.
	write(t, child, "data/leak2.txt", "y")
	if err := cm.Refresh(ctx, "/data"); err != nil {
		t.Fatal(err)
	}
	write(t, child, "data/leak3.txt", "z")
	if err := cm.Flush(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if keys := srv.Keys(t, bucket, "p/"); !slices.Equal(keys, []string{"p/keep.txt"}) {
		t.Fatalf("the fork reached its parent's source: %v", keys)
	}
	// The parent still writes back.
	write(t, parent, "data/parent.txt", "p")
	if err := pm.Flush(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if b, ok := srv.Object(t, bucket, "p/parent.txt"); !ok || string(b) != "p" {
		t.Fatalf("the parent's write-back: %q %v", b, ok)
	}
}

// attachVersity is a workspace with "/data" over srv's bucket/p.
func attachVersity(t *testing.T, srv *s3test.Versity, query string) (*vfs.FS, *mount.Manager) {
	t.Helper()
	store := mounttest.NewStore(t)
	f := store.Create("ws")
	m := store.Attach(f, "ws", []mount.Spec{versitySpec(t, srv, query)}, nil)
	if err := m.Index(t.Context()); err != nil {
		t.Fatal(err)
	}
	return f, m
}

// TestFileDirectorySwaps: a file replaced by a directory, and a directory
// replaced by a file, delete the old objects first (versitygw refuses a
// key below an object and an object over keys with 409, which used to
// leave the paths pending forever).
func TestFileDirectorySwaps(t *testing.T) {
	ctx := t.Context()
	srv := s3test.StartVersity(t, bucket)
	srv.Seed(t, bucket, "p/x", []byte("file x"))
	srv.Seed(t, bucket, "p/d/1", []byte("one"))
	srv.Seed(t, bucket, "p/d/2", []byte("two"))
	f, m := attachVersity(t, srv, "")
	if err := f.Remove(ctx, "data/x"); err != nil {
		t.Fatal(err)
	}
	if err := f.Mkdir(ctx, "data/x", 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, f, "data/x/y", "below x")
	if err := f.RemoveAll(ctx, "data/d"); err != nil {
		t.Fatal(err)
	}
	write(t, f, "data/d", "d is a file")
	if err := m.Flush(ctx, ""); err != nil {
		t.Fatalf("flush: %v", err)
	}
	if keys := srv.Keys(t, bucket, "p/"); !slices.Equal(keys, []string{"p/d", "p/x/y"}) {
		t.Fatalf("upstream keys %v, want [p/d p/x/y]", keys)
	}
	if p := m.Pending("/data"); len(p) != 0 {
		t.Fatalf("still pending: %v", p)
	}
}

// TestLostUpdates: a new local file does not overwrite an object someone
// created upstream meanwhile (If-None-Match: *), and a local delete does
// not remove an object that changed upstream (If-Match). Both are
// conflicts that stay pending; a refresh keeps the local state, and
// Resolve settles them.
func TestLostUpdates(t *testing.T) {
	ctx := t.Context()
	srv := s3test.StartVersity(t, bucket)
	srv.Seed(t, bucket, "p/del.txt", []byte("v1"))
	f, m := attachVersity(t, srv, "")
	write(t, f, "data/new.txt", "mine")
	srv.Seed(t, bucket, "p/new.txt", []byte("theirs"))
	if err := f.Remove(ctx, "data/del.txt"); err != nil {
		t.Fatal(err)
	}
	srv.Seed(t, bucket, "p/del.txt", []byte("v2 upstream"))
	if err := m.Flush(ctx, ""); !errors.Is(err, errdefs.ErrConflict) {
		t.Fatalf("flush = %v, want errdefs.ErrConflict", err)
	}
	if b, _ := srv.Object(t, bucket, "p/new.txt"); string(b) != "theirs" {
		t.Fatalf("the new local file overwrote upstream: %q", b)
	}
	if b, ok := srv.Object(t, bucket, "p/del.txt"); !ok || string(b) != "v2 upstream" {
		t.Fatalf("the local delete removed a changed object: %q %v", b, ok)
	}
	if c := m.Conflicts("/data"); !slices.Equal(c, []string{"del.txt", "new.txt"}) {
		t.Fatalf("conflicts %v", c)
	}
	// Edit again, refresh: the local edit stays.
	write(t, f, "data/new.txt", "mine, edited")
	if err := m.Refresh(ctx, "/data"); err != nil {
		t.Fatal(err)
	}
	if b, err := f.ReadFile(ctx, "data/new.txt"); err != nil || string(b) != "mine, edited" {
		t.Fatalf("refresh discarded the local edit: %q %v", b, err)
	}
	if err := m.Resolve(ctx, "/data", "new.txt", mount.KeepLocal); err != nil {
		t.Fatal(err)
	}
	if b, _ := srv.Object(t, bucket, "p/new.txt"); string(b) != "mine, edited" {
		t.Fatalf("keep-local did not force-push: %q", b)
	}
	if err := m.Resolve(ctx, "/data", "del.txt", mount.TakeUpstream); err != nil {
		t.Fatal(err)
	}
	if b, err := f.ReadFile(ctx, "data/del.txt"); err != nil || string(b) != "v2 upstream" {
		t.Fatalf("take-upstream: %q %v", b, err)
	}
	if p := m.Pending("/data"); len(p) != 0 {
		t.Fatalf("still pending: %v", p)
	}
}

// TestDeleteCost: deleting files costs one DELETE each, no LIST.
func TestDeleteCost(t *testing.T) {
	ctx := t.Context()
	srv := s3test.StartVersity(t, bucket)
	for i := range 30 {
		srv.Seed(t, bucket, fmt.Sprintf("p/f%02d", i), []byte("x"))
	}
	f, m := attachVersity(t, srv, "&page_size=10")
	for i := range 5 {
		if err := f.Remove(ctx, fmt.Sprintf("data/f%02d", i)); err != nil {
			t.Fatal(err)
		}
	}
	srv.Reset()
	if err := m.Flush(ctx, ""); err != nil {
		t.Fatal(err)
	}
	if lists := srv.Count("GET", "/"+bucket); lists != 0 {
		t.Errorf("5 deletes cost %d LISTs, want 0", lists)
	}
	for i := range 5 {
		if n := srv.Count("DELETE", fmt.Sprintf("/%s/p/f%02d", bucket, i)); n != 1 {
			t.Errorf("f%02d: %d DELETEs", i, n)
		}
	}
}

// TestStalledServer: a server that accepts connections and never answers
// fails a read with ErrUnreachable after the request timeout, instead of
// hanging it.
func TestStalledServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // held open, never answered
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		for _, c := range conns {
			c.Close()
		}
		mu.Unlock()
	})
	o := endpointOptions("http://"+ln.Addr().String(), "p")
	o.Timeout = 200 * time.Millisecond
	m := open(t, o)
	mounttest.Within(t, "a fetch from a stalled server", func() {
		if _, err := m.Fetch(t.Context(), "x"); !errors.Is(err, s3mount.ErrUnreachable) {
			t.Errorf("fetch = %v, want ErrUnreachable", err)
		}
		if _, err := m.List(t.Context()); !errors.Is(err, s3mount.ErrUnreachable) {
			t.Errorf("list = %v, want ErrUnreachable", err)
		}
	})
}

// TestUnknownAccessKey: versitygw answers an unknown access key with 404
// XAdminUserNotFound; that is a permission error, not a missing file.
func TestUnknownAccessKey(t *testing.T) {
	srv := s3test.StartVersity(t, bucket)
	srv.Seed(t, bucket, "p/f", []byte("x"))
	o := endpointOptions(srv.URL, "p")
	o.Credentials = &s3mount.Credentials{AccessKeyID: "nobody", SecretAccessKey: "nothing"}
	m := open(t, o)
	if _, err := m.List(t.Context()); !errors.Is(err, fs.ErrPermission) {
		t.Errorf("list with an unknown key = %v, want fs.ErrPermission", err)
	}
	if _, err := m.Fetch(t.Context(), "f"); !errors.Is(err, fs.ErrPermission) || errors.Is(err, fs.ErrNotExist) {
		t.Errorf("fetch with an unknown key = %v, want fs.ErrPermission", err)
	}
	o.Credentials = &s3mount.Credentials{AccessKeyID: s3test.AccessKey, SecretAccessKey: "wrong secret"}
	if _, err := open(t, o).Fetch(t.Context(), "f"); !errors.Is(err, fs.ErrPermission) {
		t.Errorf("fetch with a wrong secret = %v, want fs.ErrPermission", err)
	}
}

// TestCapStopsListing: a cap of 15 entries over 100 objects listed 5 per
// page stops after the fourth page, not after all 20.
func TestCapStopsListing(t *testing.T) {
	srv := s3test.StartVersity(t, bucket)
	for i := range 100 {
		srv.Seed(t, bucket, fmt.Sprintf("p/f%03d", i), []byte("x"))
	}
	store := mounttest.NewStore(t)
	f := store.Create("ws")
	spec := versitySpec(t, srv, "&page_size=5&maxentries=15")
	m := store.Attach(f, "ws", []mount.Spec{spec}, nil)
	srv.Reset()
	if err := m.Index(t.Context()); !errors.Is(err, errdefs.ErrQuota) {
		t.Fatalf("index = %v, want errdefs.ErrQuota", err)
	}
	if lists := srv.Count("GET", "/"+bucket); lists != 4 {
		t.Fatalf("a cap of 15 entries at 5 per page cost %d LISTs, want 4", lists)
	}
}

// TestForkDebounceTimerStaysLocal: the debounce timer a new manager arms
// at open for the fork's persisted pending paths, and Settle, write
// nothing to the parent's source.
func TestForkDebounceTimerStaysLocal(t *testing.T) {
	ctx := t.Context()
	srv := s3test.StartVersity(t, bucket)
	srv.Seed(t, bucket, "p/keep.txt", []byte("parent's"))
	t.Setenv("AWS_ACCESS_KEY_ID", s3test.AccessKey)
	t.Setenv("AWS_SECRET_ACCESS_KEY", s3test.SecretKey)
	spec, err := mount.ParseSpec("/data=s3://"+bucket+"/p?path_style=true&mode=rw&writebackms=20&max_attempts=1&endpoint="+url.QueryEscape(srv.URL), drivers)
	if err != nil {
		t.Fatal(err)
	}
	store := mounttest.NewStore(t)
	parent := store.Create("parent")
	if err := store.Attach(parent, "parent", []mount.Spec{spec}, nil).Index(ctx); err != nil {
		t.Fatal(err)
	}
	child := store.Fork(parent, "parent", "child")
	cm := store.Attach(child, "child", []mount.Spec{spec}, nil)
	if err := cm.Close(); err != nil { // before the write: its timer never fires
		t.Fatal(err)
	}
	write(t, child, "data/leak.txt", "x")
	cm = store.Attach(child, "child", []mount.Spec{spec}, nil) // re-arms the timer
	for deadline := time.Now().Add(30 * time.Second); len(cm.Pending("/data")) > 0; time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the re-armed timer never ran")
		}
	}
	if err := cm.Settle(ctx); err != nil {
		t.Fatal(err)
	}
	if keys := srv.Keys(t, bucket, "p/"); !slices.Equal(keys, []string{"p/keep.txt"}) {
		t.Fatalf("the fork's timer reached the parent's source: %v", keys)
	}
}
