package vfs_test

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/vfs"
)

// TestResetMakesHandlesStale: a handle open across a reset (a restore)
// fails with errdefs.ErrStale and its buffered writes never reach the
// restored state, which equals the checkpoint exactly.
func TestResetMakesHandlesStale(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, vfs.Options{})
	f := e.open(e.ws)
	must(t, f.WriteFile(ctx, "g", []byte("v1"), 0o644))
	must(t, f.WriteFile(ctx, "r", []byte("read"), 0o644))
	checkpoint, err := f.Root(ctx)
	must(t, err)
	must(t, f.WriteFile(ctx, "g", []byte("v2"), 0o644))

	dirty, err := f.OpenFile(ctx, "g", vfs.O_WRONLY, 0)
	must(t, err)
	_, err = dirty.WriteAt([]byte("XX"), 0)
	must(t, err)
	synced, err := f.OpenFile(ctx, "g", vfs.O_RDWR, 0)
	must(t, err)
	reader, err := f.Open(ctx, "r")
	must(t, err)
	clean, err := f.Open(ctx, "r")
	must(t, err)

	must(t, f.Reset(ctx, checkpoint, nil))

	stale := func(what string, err error) {
		t.Helper()
		if !errors.Is(err, errdefs.ErrStale) {
			t.Fatalf("%s on a handle opened before the reset: %v, want errdefs.ErrStale", what, err)
		}
	}
	stale("Close with buffered writes", dirty.Close())
	_, err = synced.Write([]byte("YY"))
	stale("Write", err)
	stale("Sync", synced.Sync())
	stale("Truncate", synced.Truncate(0))
	_, err = reader.Read(make([]byte, 4))
	stale("Read", err)
	_, err = reader.Stat()
	stale("Stat", err)
	must(t, synced.Close())
	must(t, reader.Close())
	must(t, clean.Close()) // nothing buffered: closing is fine

	if data, err := f.ReadFile(ctx, "g"); err != nil || string(data) != "v1" {
		t.Fatalf("g after restore and close: %q %v, want v1", data, err)
	}
	now, err := f.Root(ctx)
	must(t, err)
	if cs, err := vfs.Diff(ctx, vfs.Snapshot(e.deps, checkpoint, nil), f, vfs.DiffOptions{}); err != nil || len(cs) != 0 || now != checkpoint {
		t.Fatalf("restored state differs from the checkpoint (%v):\n%s", err, summary(cs))
	}

	// A handle opened after the reset works.
	h, err := f.OpenFile(ctx, "g", vfs.O_RDWR, 0)
	must(t, err)
	_, err = h.WriteAt([]byte("v3"), 0)
	must(t, err)
	must(t, h.Close())
	h, err = f.Open(ctx, "g")
	must(t, err)
	data, err := io.ReadAll(h)
	must(t, err)
	must(t, h.Close())
	if string(data) != "v3" {
		t.Fatalf("g through a new handle: %q", data)
	}
}
