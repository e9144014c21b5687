package vfs_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"testing"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/vfs"
	"github.com/forkspace/forkspace/vfs/vfstest"
)

// fillBatch makes a tree of every entry kind through b: directories,
// small and streamed files, a symlink, a hard link, xattrs, times, a
// rewrite, a rename and a removal (whose scans must see the batch's own
// entries).
func fillBatch(ctx context.Context, b *vfs.FS) error {
	steps := []func() error{
		func() error { return b.MkdirAll(ctx, "p/a/deep", 0o755) },
		func() error { return b.WriteFile(ctx, "p/a/1", randBytes(1, 30_000), 0o644) },
		func() error { return b.WriteFile(ctx, "p/a/small", []byte("hi"), 0o600) },
		func() error { return b.Symlink(ctx, "a/1", "p/link") },
		func() error { return b.Link(ctx, "p/a/1", "p/hard") },
		func() error { return b.Setxattr(ctx, "p/a/1", "user.k", []byte("v")) },
		func() error {
			h, err := b.Create(ctx, "p/a/streamed")
			if err != nil {
				return err
			}
			if _, err := h.Write(randBytes(2, 20_000)); err != nil {
				return errors.Join(err, h.Close())
			}
			return h.Close()
		},
		func() error { return b.WriteFile(ctx, "p/gone/x", nil, 0o644) },
		func() error { return b.Mkdir(ctx, "p/gone", 0o755) },
		func() error { return b.WriteFile(ctx, "p/gone/x", []byte("x"), 0o644) },
		func() error { return b.Setxattr(ctx, "p/gone/x", "user.k", []byte("v")) },
		func() error { return b.RemoveAll(ctx, "p/gone") },
		func() error { return b.Rename(ctx, "p/a/small", "p/small") },
		func() error { return b.WriteFile(ctx, "keep", []byte("rewritten"), 0o644) },
	}
	for i, s := range steps {
		err := s()
		if i == 7 { // p/gone does not exist yet
			if !errors.Is(err, fs.ErrNotExist) {
				return fmt.Errorf("write into a missing directory: %v", err)
			}
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// TestBatchCommitsAsAWhole: a batch's mutations are invisible to the
// parent until it returns, then all there, durable and consistent.
func TestBatchCommitsAsAWhole(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, vfs.Options{})
	f := e.open(e.ws)
	must(t, f.WriteFile(ctx, "keep", []byte("old"), 0o644))
	before := vfstest.Dump(t, f)
	err := f.Batch(ctx, func(b *vfs.FS) error {
		if err := fillBatch(ctx, b); err != nil {
			return err
		}
		vfstest.Equal(t, before, vfstest.Dump(t, f)) // the parent's readers see nothing yet
		if _, err := b.Stat(ctx, "p/a/streamed"); err != nil {
			return err
		}
		return nil
	})
	must(t, err)
	after := vfstest.Dump(t, f)
	if after["keep"] == before["keep"] || after["p/a/streamed"] == "" || after["p/gone"] != "" {
		t.Fatalf("batch not applied: %v", after)
	}
	must(t, f.Check(ctx))
	g := e.reopen(f)
	vfstest.Equal(t, after, vfstest.Dump(t, g))
	must(t, g.Check(ctx))
}

// TestBatchFailsAsAWhole: when fn fails, or a mutation in it passes the
// quota counted over the whole batch, the parent is exactly as before.
func TestBatchFailsAsAWhole(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, vfs.Options{Quota: meta.Quota{MaxBytes: 100_000}})
	f := e.open(e.ws)
	must(t, f.WriteFile(ctx, "keep", []byte("old"), 0o644))
	before := vfstest.Dump(t, f)
	boom := errors.New("boom")
	err := f.Batch(ctx, func(b *vfs.FS) error {
		if err := fillBatch(ctx, b); err != nil {
			return err
		}
		return boom
	})
	if !errors.Is(err, boom) {
		t.Fatalf("batch error %v", err)
	}
	vfstest.Equal(t, before, vfstest.Dump(t, f))

	// 30,000-byte files: the fourth passes the quota of the batch.
	err = f.Batch(ctx, func(b *vfs.FS) error {
		for i := range 6 {
			if err := b.WriteFile(ctx, fmt.Sprintf("f%d", i), randBytes(uint64(i), 30_000), 0o644); err != nil {
				return err
			}
		}
		return nil
	})
	vfstest.IsPathErr(t, err, errdefs.ErrQuota)
	vfstest.Equal(t, before, vfstest.Dump(t, f))
	u, err := f.Usage(ctx)
	must(t, err)
	if u.Bytes != 3 || u.Entries != 1 {
		t.Fatalf("usage after a refused batch: %+v", u)
	}
	vfstest.Equal(t, before, vfstest.Dump(t, e.reopen(f)))
}

// TestBatchExcludesWriters: a mutation of the parent made while a batch
// runs waits for it and lands after it; a handle of the batch commits
// nothing after it.
func TestBatchExcludesWriters(t *testing.T) {
	ctx := context.Background()
	f := newFS(t)
	var wg sync.WaitGroup
	var h *vfs.File
	err := f.Batch(ctx, func(b *vfs.FS) error {
		wg.Go(func() { must(t, f.WriteFile(ctx, "outside", []byte("o"), 0o644)) })
		var err error
		if h, err = b.Create(ctx, "left-open"); err != nil {
			return err
		}
		return b.WriteFile(ctx, "inside", []byte("i"), 0o644)
	})
	must(t, err)
	wg.Wait()
	for _, name := range []string{"inside", "outside", "left-open"} {
		if _, err := f.Stat(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	_, _ = h.Write([]byte("late"))
	if err := h.Close(); !errors.Is(err, fs.ErrClosed) {
		t.Fatalf("a batch handle committed after the batch: %v", err)
	}
	if data, err := f.ReadFile(ctx, "left-open"); err != nil || len(data) != 0 {
		t.Fatalf("left-open: %q %v", data, err)
	}
	must(t, f.Check(ctx))
}
