package gc_test

import (
	"context"
	"os"
	"slices"
	"testing"
	"time"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/blob"
	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/gc"
	"github.com/forkspace/forkspace/internal/benchtree"
)

// listOnly hides a store's ListIDs, so a plan lists blobs with their Info.
type listOnly struct{ blob.Store }

// TestPlanListsIDs: a plan that lists the blob directory's addresses alone
// (blob.IDLister) and stats only the blobs nothing reaches finds what one
// listing every blob's Info finds: the same garbage (old unreached blobs,
// a deleted fork's) and the same young blobs (stored within the grace
// period), and keeps every reachable blob.
func TestPlanListsIDs(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := openEnv(t, t.TempDir())
	a, err := e.s.Create(ctx, "a", forkspace.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		if err := a.WriteFile(ctx, "f"+string(rune('a'+i)), benchtree.Bytes(uint64(i), 4<<10), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := a.Fork(ctx, "b", forkspace.ForkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if err := b.WriteFile(ctx, "g"+string(rune('a'+i)), benchtree.Bytes(uint64(100+i), 4<<10), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := e.s.Delete(ctx, "b"); err != nil {
		t.Fatal(err)
	}
	// Orphans stored straight in the blob store, half of them aged past
	// the grace period.
	for i := range 10 {
		data := benchtree.Bytes(uint64(200+i), 1<<10)
		id := cas.Sum(data)
		if err := e.blobs.Put(ctx, id, data); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			old := time.Now().Add(-48 * time.Hour)
			if err := os.Chtimes(e.blobs.Path(id), old, old); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, grace := range []time.Duration{gc.NoGrace, time.Hour} {
		ids, err := gc.NewPlan(ctx, deps(e), gc.Options{Grace: grace})
		if err != nil {
			t.Fatal(err)
		}
		d := deps(e)
		d.Blobs = listOnly{e.blobs}
		infos, err := gc.NewPlan(ctx, d, gc.Options{Grace: grace})
		if err != nil {
			t.Fatal(err)
		}
		sorted := func(hs []cas.Hash) []cas.Hash {
			return slices.SortedFunc(slices.Values(hs), func(x, y cas.Hash) int { return slices.Compare(x[:], y[:]) })
		}
		if !slices.Equal(sorted(ids.Blobs), sorted(infos.Blobs)) || ids.Garbage != infos.Garbage || ids.Young != infos.Young || ids.Reachable != infos.Reachable {
			t.Fatalf("grace %v: listing addresses planned %d blobs (%+v, young %+v), listing infos %d (%+v, young %+v)",
				grace, len(ids.Blobs), ids.Garbage, ids.Young, len(infos.Blobs), infos.Garbage, infos.Young)
		}
		wantGarbage := map[time.Duration]int64{gc.NoGrace: 20, time.Hour: 5}[grace]
		if ids.Garbage.Blobs != wantGarbage {
			t.Fatalf("grace %v: %d garbage blobs, want %d", grace, ids.Garbage.Blobs, wantGarbage)
		}
	}
}
