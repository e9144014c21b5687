package gc_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/gc"
	"github.com/forkspace/forkspace/meta"
)

// garbageBlob writes data to a file of a new workspace and removes it
// again (folded, so nothing references its blob), and returns the
// workspace and the blob.
func garbageBlob(t *testing.T, e *env, data []byte) (*forkspace.Workspace, cas.Hash) {
	t.Helper()
	ctx := context.Background()
	w, err := e.s.Create(ctx, "w", forkspace.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.WriteFile(ctx, "old", data, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := w.Remove(ctx, "old"); err != nil {
		t.Fatal(err)
	}
	if err := w.Fold(ctx); err != nil {
		t.Fatal(err)
	}
	_, chunks := contentHashes(data)
	if len(chunks) != 1 {
		t.Fatalf("want one chunk, got %d", len(chunks))
	}
	for h := range chunks {
		return w, h
	}
	panic("unreachable")
}

// TestDedupOntoPlannedBlob: a writer stores bytes whose blob a plan has
// listed as garbage, after the plan's snapshot. Execute must reprieve it.
func TestDedupOntoPlannedBlob(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := openEnv(t, t.TempDir())
	data := pool[5]
	w, h := garbageBlob(t, e, data)
	p, err := gc.NewPlan(ctx, deps(e), gc.Options{Grace: gc.NoGrace, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(p.Blobs, h) {
		t.Fatalf("plan does not list the garbage blob")
	}
	if err := w.WriteFile(ctx, "new", data, 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := p.Execute(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got.Blobs != 0 {
		t.Fatalf("execute deleted %d blobs, want the planned one reprieved", got.Blobs)
	}
	checkFiles(t, "after execute", w, files{"new": data})
}

// TestDedupOntoDeletingBlob: a writer meets a blob in state deleting. It
// must wait until the collector deleted it, then store it again.
func TestDedupOntoDeletingBlob(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := openEnv(t, t.TempDir())
	data := pool[5]
	w, h := garbageBlob(t, e, data)
	// Play the collector's first two phases by hand.
	var deleting []cas.Hash
	err := e.meta.Update(ctx, func(tx meta.Tx) error {
		if err := tx.Condemn([]cas.Hash{h}); err != nil {
			return err
		}
		var err error
		deleting, err = tx.MarkDeleting(time.Now().Add(time.Hour))
		return err
	})
	if err != nil || !slices.Equal(deleting, []cas.Hash{h}) {
		t.Fatalf("mark deleting: %v %v", deleting, err)
	}
	wrote := make(chan error, 1)
	go func() { wrote <- w.WriteFile(ctx, "new", data, 0o644) }()
	select {
	case err := <-wrote:
		t.Fatalf("write finished (%v) while its blob was being deleted", err)
	case <-time.After(50 * time.Millisecond):
	}
	// The collector's third phase.
	if err := e.blobs.Delete(ctx, h); err != nil {
		t.Fatal(err)
	}
	if err := e.meta.Update(ctx, func(tx meta.Tx) error { return tx.Uncondemn([]cas.Hash{h}) }); err != nil {
		t.Fatal(err)
	}
	if err := <-wrote; err != nil {
		t.Fatal(err)
	}
	if _, err := e.blobs.Stat(ctx, h); err != nil {
		t.Fatalf("blob not stored again: %v", err)
	}
	checkFiles(t, "after the write", w, files{"new": data})
	r, err := e.s.Check(ctx)
	if err != nil || !r.Clean() {
		t.Fatalf("check: %v %+v", err, r)
	}
}
