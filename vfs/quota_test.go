package vfs_test

import (
	"context"
	"testing"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/vfs"
	"github.com/forkspace/forkspace/vfs/vfstest"
)

func TestQuotaEntries(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, vfs.Options{Quota: meta.Quota{MaxEntries: 3}})
	f := e.open(e.ws)
	must(t, f.Mkdir(ctx, "d", 0o755))
	must(t, f.WriteFile(ctx, "d/a", []byte("a"), 0o644))
	must(t, f.Symlink(ctx, "a", "d/l"))
	vfstest.Fails(t, f, errdefs.ErrQuota, func() error { return f.WriteFile(ctx, "d/b", nil, 0o644) })
	vfstest.Fails(t, f, errdefs.ErrQuota, func() error { return f.Mkdir(ctx, "e", 0o755) })
	vfstest.Fails(t, f, errdefs.ErrQuota, func() error { return f.MkdirAll(ctx, "d/x/y", 0o755) })
	vfstest.Fails(t, f, errdefs.ErrQuota, func() error { return f.Symlink(ctx, "a", "d/l2") })
	vfstest.Fails(t, f, errdefs.ErrQuota, func() error { _, err := f.Create(ctx, "c"); return err })
	// Operations that add no inode still work; freeing one makes room.
	must(t, f.Link(ctx, "d/a", "hard"))
	must(t, f.WriteFile(ctx, "d/a", []byte("rewritten"), 0o644))
	must(t, f.Rename(ctx, "d/l", "l"))
	must(t, f.Remove(ctx, "l"))
	must(t, f.WriteFile(ctx, "d/b", nil, 0o644))
}

func TestQuotaBytes(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, vfs.Options{Quota: meta.Quota{MaxBytes: 100}})
	f := e.open(e.ws)
	must(t, f.WriteFile(ctx, "a", make([]byte, 60), 0o644))
	vfstest.Fails(t, f, errdefs.ErrQuota, func() error { return f.WriteFile(ctx, "b", make([]byte, 41), 0o644) })
	vfstest.Fails(t, f, errdefs.ErrQuota, func() error { return f.WriteFile(ctx, "a", make([]byte, 101), 0o644) })
	vfstest.Fails(t, f, errdefs.ErrQuota, func() error { return f.Truncate(ctx, "a", 101) })
	must(t, f.WriteFile(ctx, "b", make([]byte, 40), 0o644))
	must(t, f.WriteFile(ctx, "a", make([]byte, 10), 0o644)) // shrinking is always allowed
	must(t, f.Link(ctx, "b", "b2"))                         // counted once per inode

	// A handle's write fails at Write time when the projected size passes
	// the quota.
	h, err := f.OpenFile(ctx, "a", vfs.O_RDWR, 0)
	must(t, err)
	_, err = h.WriteAt(make([]byte, 50), 10)
	must(t, err)
	vfstest.IsPathErr(t, h.Truncate(61), errdefs.ErrQuota)
	vfstest.IsPathErr(t, h.Close(), errdefs.ErrQuota) // poisoned: commits nothing
	fi, err := f.Stat(ctx, "a")
	must(t, err)
	if fi.Size() != 10 {
		t.Fatalf("size after a refused truncate: %d", fi.Size())
	}

	// Another writer takes the room; the commit re-checks and fails, the
	// data stays buffered, and succeeds once room is made.
	h, err = f.OpenFile(ctx, "a", vfs.O_RDWR, 0)
	must(t, err)
	_, err = h.WriteAt(make([]byte, 50), 0)
	must(t, err)
	must(t, f.WriteFile(ctx, "c", make([]byte, 30), 0o644))
	before := vfstest.Dump(t, f)
	vfstest.IsPathErr(t, h.Sync(), errdefs.ErrQuota)
	vfstest.Equal(t, before, vfstest.Dump(t, f))
	must(t, f.Remove(ctx, "c"))
	must(t, h.Close())
	fi, err = f.Stat(ctx, "a")
	must(t, err)
	if fi.Size() != 50 {
		t.Fatalf("size after retried commit: %d", fi.Size())
	}
	u, err := f.Usage(ctx)
	must(t, err)
	if u.Bytes != 90 || u.Entries != 2 {
		t.Fatalf("usage %+v", u)
	}
}

// TestQuotaFromWorkspace: a zero Options.Quota uses the workspace row's.
func TestQuotaFromWorkspace(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, vfs.Options{})
	e.ws.Quota = meta.Quota{MaxEntries: 1}
	f := e.open(e.ws)
	if f.Quota() != e.ws.Quota {
		t.Fatalf("quota %+v", f.Quota())
	}
	must(t, f.Mkdir(ctx, "a", 0o755))
	vfstest.Fails(t, f, errdefs.ErrQuota, func() error { return f.Mkdir(ctx, "b", 0o755) })
}
