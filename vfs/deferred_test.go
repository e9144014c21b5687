package vfs_test

import (
	"context"
	"errors"
	"io/fs"
	"sync"
	"testing"

	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/vfs"
)

// durable returns the workspace's state as the metadata store holds it
// (what a process opening the store after a crash sees), read without
// going through f.
func (e *env) durable(id string) *vfs.FS {
	e.t.Helper()
	var (
		w    *meta.Workspace
		rows []meta.Staged
	)
	err := e.deps.Meta.View(context.Background(), func(tx meta.Tx) error {
		var err error
		if w, err = tx.Workspace(id); err != nil {
			return err
		}
		rows, err = tx.Staged(id)
		return err
	})
	if err != nil {
		e.t.Fatal(err)
	}
	return vfs.Snapshot(e.deps, w.Root, rows)
}

func exists(t *testing.T, f *vfs.FS, name string) bool {
	t.Helper()
	_, err := f.Lstat(context.Background(), name)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		t.Fatal(err)
	}
	return err == nil
}

// TestDeferredCommit: a deferred creation is durable when its handle's
// Flush or Close returns (written to or not), a deferred removal by Sync;
// readers never see less than was acknowledged, and watchers hear of a
// deferred change only once it is durable.
func TestDeferredCommit(t *testing.T) {
	bg := context.Background()
	ctx := vfs.WithDeferredCommit(bg)
	e := newEnv(t, vfs.Options{})
	f := e.open(e.ws)
	var (
		mu    sync.Mutex
		heard []string
	)
	stop := f.Watch(func(_ context.Context, ev vfs.Event) {
		// Durable before it is heard of.
		if got := exists(t, e.durable(e.ws.ID), ev.Name); got != (ev.Op != "remove") {
			t.Errorf("heard of %s %s before it was durable", ev.Op, ev.Name)
		}
		mu.Lock()
		heard = append(heard, ev.Op+" "+ev.Name)
		mu.Unlock()
	})
	defer stop()

	h, err := f.OpenFile(ctx, "a", vfs.O_CREATE|vfs.O_WRONLY|vfs.O_EXCL, 0o644)
	must(t, err)
	if !exists(t, f, "a") {
		t.Fatal("a reader does not see a file whose creation returned")
	}
	_, err = h.Write([]byte("x"))
	must(t, err)
	must(t, h.Flush())
	if !exists(t, e.durable(e.ws.ID), "a") {
		t.Fatal("created and flushed, not durable")
	}
	must(t, h.Close())

	// touch: created and closed with nothing written.
	h, err = f.OpenFile(ctx, "t", vfs.O_CREATE|vfs.O_WRONLY, 0o644)
	must(t, err)
	must(t, h.Close())
	if !exists(t, e.durable(e.ws.ID), "t") {
		t.Fatal("touched and closed, not durable")
	}

	// A handle's own commits are never deferred, though opened so.
	h, err = f.OpenFile(ctx, "t", vfs.O_WRONLY, 0)
	must(t, err)
	_, err = h.Write([]byte("y"))
	must(t, err)
	must(t, h.Flush())
	if data, err := e.durable(e.ws.ID).ReadFile(bg, "t"); err != nil || string(data) != "y" {
		t.Fatalf("flushed through a handle opened deferred: %q, %v", data, err)
	}
	must(t, h.Close())

	must(t, f.Remove(ctx, "a"))
	if exists(t, f, "a") {
		t.Fatal("a reader sees a file whose removal returned")
	}
	must(t, f.Remove(ctx, "t"))
	must(t, f.Sync(bg))
	if d := e.durable(e.ws.ID); exists(t, d, "a") || exists(t, d, "t") {
		t.Fatal("removed and synced, still durable")
	}
	mu.Lock()
	defer mu.Unlock()
	if len(heard) != 6 {
		t.Fatalf("watchers heard %q", heard)
	}
}

// TestDeferredFailure: when the transaction carrying a deferred creation
// fails, its handle's Close fails and the file does not exist; a deferred
// removal that fails leaves the file, and readers see the durable state.
func TestDeferredFailure(t *testing.T) {
	bg := context.Background()
	ctx := vfs.WithDeferredCommit(bg)
	e := newEnv(t, vfs.Options{})
	fm := &faultyMeta{Store: e.deps.Meta}
	e.deps.Meta = fm
	f := e.open(e.ws)
	must(t, f.WriteFile(bg, "keep", []byte("k"), 0o644))

	fm.fail.Store(true)
	h, err := f.OpenFile(ctx, "a", vfs.O_CREATE|vfs.O_WRONLY, 0o644)
	must(t, err)
	_, err = h.Write([]byte("x"))
	must(t, err)
	if err := h.Close(); !errors.Is(err, errInjected) {
		t.Fatalf("close after a failed deferred creation: %v", err)
	}
	must(t, f.Remove(ctx, "keep")) // returns before its commit fails
	_ = f.Settle(bg)
	fm.fail.Store(false)
	if exists(t, f, "a") || !exists(t, f, "keep") {
		t.Fatal("a failed deferred mutation is visible")
	}
	h, err = f.OpenFile(ctx, "b", vfs.O_CREATE|vfs.O_WRONLY, 0o644)
	must(t, err)
	must(t, h.Close())
	if !exists(t, e.durable(e.ws.ID), "b") || !exists(t, e.durable(e.ws.ID), "keep") {
		t.Fatal("after a failure, deferred creations no longer land")
	}
}
