package s3mount_test

import (
	"net/url"
	"slices"
	"testing"

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
