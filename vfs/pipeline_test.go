package vfs_test

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/forkspace/forkspace/blob/fileblob"
	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/chunk"
	"github.com/forkspace/forkspace/content"
	"github.com/forkspace/forkspace/vfs"
)

// refusingBlobs is a blob directory whose puts fail once refuse is set.
type refusingBlobs struct {
	*fileblob.Store
	refuse atomic.Bool
	puts   atomic.Int64
}

var errRefused = errors.New("put refused by the test")

func (r *refusingBlobs) Put(ctx context.Context, id cas.Hash, data []byte) error {
	if r.refuse.Load() {
		return errRefused
	}
	r.puts.Add(1)
	return r.Store.Put(ctx, id, data)
}

func (r *refusingBlobs) PutDeferred(ctx context.Context, id cas.Hash, data []byte) error {
	if r.refuse.Load() {
		return errRefused
	}
	r.puts.Add(1)
	return r.Store.PutDeferred(ctx, id, data)
}

// TestCommitAheadPipelined: a handle stores what it buffered on another
// goroutine while the application writes on (content.Draft.StartAhead).
// A Close right after a commit ahead started waits for it and records
// the whole file. When the blob store refuses the puts of a commit
// ahead running in the background, a later write or the Close reports
// it, the file keeps its old contents, and no upload intent stays held;
// the FS writes normally once the store accepts puts again.
func TestCommitAheadPipelined(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, vfs.Options{})
	blobs, err := fileblob.Open(filepath.Join(e.dir, "refusing"))
	if err != nil {
		t.Fatal(err)
	}
	rb := &refusingBlobs{Store: blobs}
	e.deps.Content = content.New(content.Options{Blobs: rb, Meta: e.deps.Meta, Params: chunk.DefaultParams, Defer: true})
	f := e.open(e.ws)
	old := randBytes(7, 3<<20)
	must(t, f.WriteFile(ctx, "f", old, 0o644))
	data := randBytes(8, 48<<20)
	write := func(h *vfs.File, from, to int) error {
		for off := from; off < to; off += 1 << 20 {
			if _, err := h.Write(data[off : off+1<<20]); err != nil {
				return err
			}
		}
		return nil
	}
	held := func() int { return pendingIntents(t, ctx, e) }
	check := func(name string, want []byte) {
		t.Helper()
		got, err := f.ReadFile(ctx, name)
		must(t, err)
		if !bytes.Equal(got, want) {
			t.Fatalf("%s holds %d bytes, want %d", name, len(got), len(want))
		}
		if n := held(); n != 0 {
			t.Fatalf("%d upload intents held", n)
		}
	}

	// Closed just after the write that started a commit ahead.
	h, err := f.OpenFile(ctx, "g", vfs.O_WRONLY|vfs.O_CREATE|vfs.O_TRUNC, 0o644)
	must(t, err)
	must(t, write(h, 0, 17<<20))
	must(t, h.Close())
	check("g", data[:17<<20])

	// Refused in the background: the write that starts the next commit
	// ahead fails, the handle is poisoned, Close fails too.
	h, err = f.OpenFile(ctx, "f", vfs.O_RDWR|vfs.O_TRUNC, 0o644)
	must(t, err)
	must(t, write(h, 0, 16<<20))          // starts a commit ahead of 16 MiB
	_, err = h.ReadAt(make([]byte, 1), 0) // waits for it
	must(t, err)
	rb.refuse.Store(true)
	must(t, write(h, 16<<20, 40<<20)) // starts one more, failing beside
	err = write(h, 40<<20, 48<<20)
	if !errors.Is(err, errRefused) {
		t.Fatalf("write after a refused commit ahead: %v", err)
	}
	if !h.Poisoned() {
		t.Fatal("the handle is not poisoned")
	}
	if err := h.Close(); !errors.Is(err, errRefused) {
		t.Fatalf("close of a poisoned handle: %v", err)
	}
	rb.refuse.Store(false)
	check("f", old)

	// Refused in the background and reported by Close.
	h, err = f.OpenFile(ctx, "f", vfs.O_WRONLY|vfs.O_TRUNC, 0o644)
	must(t, err)
	must(t, write(h, 0, 15<<20))
	rb.refuse.Store(true)
	must(t, write(h, 15<<20, 20<<20))
	if err := h.Close(); !errors.Is(err, errRefused) {
		t.Fatalf("close after a refused commit ahead: %v", err)
	}
	rb.refuse.Store(false)
	check("f", old)

	// And the store writes again.
	h, err = f.OpenFile(ctx, "f", vfs.O_WRONLY|vfs.O_TRUNC, 0o644)
	must(t, err)
	must(t, write(h, 0, 48<<20))
	must(t, h.Sync())
	must(t, h.Close())
	check("f", data)
}
