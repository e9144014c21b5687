package forkspace_test

import (
	"context"
	"errors"
	"testing"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/vfs"
)

// TestRestoreMakesOpenHandlesStale is issue 17's scenario: a handle opened
// after the checkpoint writes, the workspace is restored, then the handle
// closes. The close fails with errdefs.ErrStale and the file keeps the
// checkpoint's contents.
func TestRestoreMakesOpenHandlesStale(t *testing.T) {
	ctx := context.Background()
	st := openStore(t, t.TempDir())
	w := mustCreate(t, st, "w")
	write(t, w, "g", "v1")
	if _, err := w.Checkpoint(ctx, "cp"); err != nil {
		t.Fatal(err)
	}
	write(t, w, "g", "v2")
	h, err := w.OpenFile(ctx, "g", vfs.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.WriteAt([]byte("XX"), 0); err != nil {
		t.Fatal(err)
	}
	if err := w.Restore(ctx, "cp"); err != nil {
		t.Fatal(err)
	}
	if err := h.Close(); !errors.Is(err, errdefs.ErrStale) {
		t.Fatalf("close of a handle opened before the restore: %v, want errdefs.ErrStale", err)
	}
	if got := read(t, w.FS, "g"); got != "v1" {
		t.Fatalf("g after restore: %q, want v1", got)
	}
	changes, err := st.Diff(ctx, "w@cp", "w", vfs.DiffOptions{})
	if err != nil || len(changes) != 0 {
		t.Fatalf("restored state differs from the checkpoint: %+v %v", changes, err)
	}
}
