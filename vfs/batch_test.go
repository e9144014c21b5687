package vfs_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"pgregory.net/rapid"

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

// batchOp is one random operation, applied alike to two filesystems.
type batchOp struct {
	kind, p, q string
	data       []byte
}

func drawBatchOp(rt *rapid.T) batchOp {
	path := func(label string) string {
		parts := make([]string, rapid.IntRange(1, 3).Draw(rt, label+"Depth"))
		for i := range parts {
			parts[i] = rapid.SampledFrom(names).Draw(rt, label)
		}
		return strings.Join(parts, "/")
	}
	return batchOp{
		kind: rapid.SampledFrom([]string{"mkdirall", "write", "handle", "truncate", "remove", "removeall", "rename", "symlink", "link", "chmod", "setxattr"}).Draw(rt, "op"),
		p:    path("path"),
		q:    path("to"),
		data: []byte(strings.Repeat("x", rapid.IntRange(0, 60).Draw(rt, "len"))),
	}
}

func (o batchOp) apply(ctx context.Context, f *vfs.FS) error {
	switch o.kind {
	case "mkdirall":
		return f.MkdirAll(ctx, o.p, 0o755)
	case "write":
		return f.WriteFile(ctx, o.p, o.data, 0o644)
	case "handle":
		h, err := f.OpenFile(ctx, o.p, vfs.O_WRONLY|vfs.O_CREATE|vfs.O_TRUNC, 0o644)
		if err != nil {
			return err
		}
		if _, err := h.Write(o.data); err != nil {
			return errors.Join(err, h.Close())
		}
		return h.Close()
	case "truncate":
		return f.Truncate(ctx, o.p, int64(len(o.data)))
	case "remove":
		return f.Remove(ctx, o.p)
	case "removeall":
		return f.RemoveAll(ctx, o.p)
	case "rename":
		return f.Rename(ctx, o.p, o.q)
	case "symlink":
		return f.Symlink(ctx, o.q, o.p)
	case "link":
		return f.Link(ctx, o.p, o.q)
	case "chmod":
		return f.Chmod(ctx, o.p, 0o600)
	default:
		return f.Setxattr(ctx, o.p, "user.k", o.data)
	}
}

var mtimes = regexp.MustCompile(`mtime=\d+`)

// withoutTimes is a Dump without modification times.
func withoutTimes(d map[string]string) map[string]string {
	out := make(map[string]string, len(d))
	for k, v := range d {
		out[k] = mtimes.ReplaceAllString(v, "")
	}
	return out
}

// TestBatchModel: random operations, under a quota that refuses some, run
// inside a batch on one workspace and one by one on a twin. Each operation
// fails or succeeds alike in both; a batch that returns nil leaves the
// same tree as the twin, a batch that fails leaves the state before it,
// and both survive a reopen.
func TestBatchModel(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, vfs.Options{})
	quota := meta.Quota{MaxBytes: 300, MaxEntries: 10}
	n := 0
	open := func(rt *rapid.T) (*vfs.FS, *meta.Workspace) {
		n++
		root, nodes, err := vfs.NewTree(ctx, e.deps, time.Now())
		must(rt, err)
		w := &meta.Workspace{ID: fmt.Sprintf("batch-%d", n), Name: fmt.Sprintf("batch-%d", n), Root: root, Quota: quota}
		e.createWorkspace(w, nodes)
		f, err := vfs.Open(ctx, e.deps, w, vfs.Options{FoldRows: rapid.IntRange(5, 100).Draw(rt, "foldRows")})
		must(rt, err)
		return f, w
	}
	rapid.Check(t, func(rt *rapid.T) {
		a, aw := open(rt)
		b, _ := open(rt)
		defer a.Close()
		defer b.Close()
		for range rapid.IntRange(0, 15).Draw(rt, "before") {
			op := drawBatchOp(rt)
			_, _ = op.apply(ctx, a), op.apply(ctx, b)
		}
		before := vfstest.Dump(t, a)
		abort := rapid.Bool().Draw(rt, "abort")
		errAbort := errors.New("abort")
		err := a.Batch(ctx, func(in *vfs.FS) error {
			for range rapid.IntRange(1, 25).Draw(rt, "ops") {
				op := drawBatchOp(rt)
				got, want := op.apply(ctx, in), op.apply(ctx, b)
				if (got == nil) != (want == nil) || (got != nil && got.Error() != want.Error()) {
					rt.Fatalf("%+v: %v in the batch, %v outside", op, got, want)
				}
			}
			if abort {
				return errAbort
			}
			return nil
		})
		want := withoutTimes(vfstest.Dump(t, b))
		if abort {
			if !errors.Is(err, errAbort) {
				rt.Fatalf("aborted batch: %v", err)
			}
			vfstest.Equal(t, before, vfstest.Dump(t, a))
			want = withoutTimes(before)
		} else {
			must(rt, err)
			vfstest.Equal(t, want, withoutTimes(vfstest.Dump(t, a)))
		}
		must(rt, a.Close())
		again, err := vfs.Open(ctx, e.deps, aw, vfs.Options{})
		must(rt, err)
		defer again.Close()
		vfstest.Equal(t, want, withoutTimes(vfstest.Dump(t, again)))
	})
}

// TestNestedBatch: a batch inside a batch lands in the outer one whole or
// not at all, and nothing reaches the workspace before the outer ends.
func TestNestedBatch(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, vfs.Options{})
	f := e.open(e.ws)
	boom := errors.New("boom")
	err := f.Batch(ctx, func(b *vfs.FS) error {
		if err := b.WriteFile(ctx, "outer", []byte("o"), 0o644); err != nil {
			return err
		}
		err := b.Batch(ctx, func(in *vfs.FS) error {
			if err := in.WriteFile(ctx, "dropped", []byte("d"), 0o644); err != nil {
				return err
			}
			return boom
		})
		if !errors.Is(err, boom) {
			return fmt.Errorf("inner batch: %v", err)
		}
		err = b.Batch(ctx, func(in *vfs.FS) error { return in.WriteFile(ctx, "kept", []byte("k"), 0o644) })
		if err != nil {
			return err
		}
		if _, err := b.Stat(ctx, "kept"); err != nil {
			return err
		}
		if _, err := f.Stat(ctx, "kept"); !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("the inner batch reached the workspace early: %v", err)
		}
		return nil
	})
	must(t, err)
	g := e.reopen(f)
	d := vfstest.Dump(t, g)
	if d["outer"] == "" || d["kept"] == "" || d["dropped"] != "" {
		t.Fatalf("after nested batches: %v", d)
	}
}

// TestBatchPanic: a panicking fn changes nothing and leaves f usable.
func TestBatchPanic(t *testing.T) {
	ctx := context.Background()
	f := newFS(t)
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("no panic")
			}
		}()
		_ = f.Batch(ctx, func(b *vfs.FS) error {
			must(t, b.WriteFile(ctx, "x", []byte("x"), 0o644))
			panic("boom")
		})
	}()
	if _, err := f.Stat(ctx, "x"); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("a panicked batch landed: %v", err)
	}
	must(t, f.WriteFile(ctx, "y", []byte("y"), 0o644))
}
