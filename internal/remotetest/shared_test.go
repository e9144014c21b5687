package remotetest_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/blob/s3blob"
	"github.com/forkspace/forkspace/internal/pgtest"
	"github.com/forkspace/forkspace/internal/s3client"
	"github.com/forkspace/forkspace/internal/s3test"
	"github.com/forkspace/forkspace/meta/pgmeta"
	"github.com/forkspace/forkspace/vfs"
	"github.com/forkspace/forkspace/vfs/vfstest"
)

// sharedStore opens one more process's view of the store on database db
// with its blobs under prefix in bucket (Options.Shared).
func sharedStore(t *testing.T, db string, v *s3test.Versity, bucket, prefix string) *forkspace.Store {
	t.Helper()
	ctx := context.Background()
	m, err := pgmeta.Open(ctx, db, pgmeta.Options{Logger: quiet, Shared: true})
	if err != nil {
		t.Fatal(err)
	}
	b, err := s3blob.Open(s3blob.Options{
		Bucket: bucket, Prefix: prefix, Endpoint: v.URL, PathStyle: true, Region: s3test.Region,
		Credentials: &s3client.Credentials{AccessKeyID: s3test.AccessKey, SecretAccessKey: s3test.SecretKey},
	})
	if err != nil {
		t.Fatal(err)
	}
	st, err := forkspace.Open(ctx, forkspace.Options{Dir: t.TempDir(), Meta: m, Blobs: b, InlineMax: 512, FoldRows: 64, Shared: true, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

// TestConformanceShared runs the vfs conformance suite on a store two
// processes share (PostgreSQL + versitygw, small inline limit and fold
// threshold, so bytes go to the bucket and heads fold often): each
// test's workspace is created, and written first, through one store and
// then driven through the other, whose commits fence on the head
// generation the first one moved.
func TestConformanceShared(t *testing.T) {
	v := s3test.StartVersity(t, "conformance")
	db := pgtest.DB(t)
	a, b := sharedStore(t, db, v, "conformance", "s"), sharedStore(t, db, v, "conformance", "s")
	n := 0
	vfstest.Run(t, func(t *testing.T) *vfs.FS {
		ctx := context.Background()
		n++
		name := fmt.Sprintf("w%d", n)
		wa, err := a.Create(ctx, name, forkspace.CreateOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// A change through a, then a's own copy deleted again: b's
		// first view of the workspace is one a has moved.
		if err := wa.WriteFile(ctx, ".probe", []byte("a"), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := wa.Remove(ctx, ".probe"); err != nil {
			t.Fatal(err)
		}
		wb, err := b.Workspace(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		return wb.FS
	})
}
