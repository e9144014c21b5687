package metatest

import (
	"context"
	"errors"
	"io/fs"
	"sync"
	"testing"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/meta"
)

// testHeadGen checks the head generation's fence: CheckHead and
// AdvanceHead pass only at the current generation, AdvanceHead moves it
// by one, a failed advance changes nothing, and a missing workspace is
// fs.ErrNotExist.
func testHeadGen(t *testing.T, s meta.Store) {
	w := workspace("alpha")
	update(t, s, func(tx meta.Tx) error { return tx.CreateWorkspace(&w) })
	gen := func() int64 {
		var g int64
		view(t, s, func(tx meta.Tx) error {
			got, err := tx.Workspace(w.ID)
			if err == nil {
				g = got.HeadGen
			}
			return err
		})
		return g
	}
	if g := gen(); g != 0 {
		t.Fatalf("a new workspace is at head generation %d, want 0", g)
	}
	ctx := context.Background()
	for want := int64(1); want <= 3; want++ {
		update(t, s, func(tx meta.Tx) error { return tx.AdvanceHead(w.ID, want-1) })
		if g := gen(); g != want {
			t.Fatalf("after AdvanceHead from %d: generation %d", want-1, g)
		}
	}
	view(t, s, func(tx meta.Tx) error {
		if err := tx.CheckHead(w.ID, 3); err != nil {
			t.Errorf("CheckHead at the current generation: %v", err)
		}
		for _, g := range []int64{0, 2, 4} {
			err := tx.CheckHead(w.ID, g)
			wantErr(t, "CheckHead at another generation", err, meta.ErrHeadMoved)
			wantErr(t, "CheckHead at another generation", err, errdefs.ErrStale)
		}
		wantErr(t, "CheckHead of a missing workspace", tx.CheckHead("id-missing", 0), fs.ErrNotExist)
		return nil
	})
	err := s.Update(ctx, func(tx meta.Tx) error {
		if err := tx.SetRoot(w.ID, hashOf("moved")); err != nil {
			return err
		}
		return tx.AdvanceHead(w.ID, 2)
	})
	wantErr(t, "AdvanceHead from a past generation", err, meta.ErrHeadMoved)
	view(t, s, func(tx meta.Tx) error {
		got, err := tx.Workspace(w.ID)
		if err != nil {
			return err
		}
		if got.HeadGen != 3 || got.Root == hashOf("moved") {
			t.Errorf("a refused AdvanceHead left generation %d, root changed %v", got.HeadGen, got.Root == hashOf("moved"))
		}
		return nil
	})
	err = s.Update(ctx, func(tx meta.Tx) error { return tx.AdvanceHead("id-missing", 0) })
	wantErr(t, "AdvanceHead of a missing workspace", err, fs.ErrNotExist)
}

// testHeadGenConcurrent races writers advancing one workspace's head,
// each from the generation it read in an earlier View, as processes
// sharing a store do: exactly one advance from each generation succeeds.
func testHeadGenConcurrent(t *testing.T, s meta.Store) {
	w := workspace("alpha")
	update(t, s, func(tx meta.Tx) error { return tx.CreateWorkspace(&w) })
	const writers, rounds = 4, 10
	var (
		mu   sync.Mutex
		wins = map[int64]int{}
		wg   sync.WaitGroup
	)
	ctx := context.Background()
	for range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				var g int64
				if err := s.View(ctx, func(tx meta.Tx) error {
					got, err := tx.Workspace(w.ID)
					if err == nil {
						g = got.HeadGen
					}
					return err
				}); err != nil {
					t.Error(err)
					return
				}
				err := s.Update(ctx, func(tx meta.Tx) error { return tx.AdvanceHead(w.ID, g) })
				switch {
				case err == nil:
					mu.Lock()
					wins[g]++
					mu.Unlock()
				case !errors.Is(err, meta.ErrHeadMoved):
					t.Errorf("AdvanceHead from %d: %v", g, err)
					return
				}
			}
		}()
	}
	wg.Wait()
	var final int64
	view(t, s, func(tx meta.Tx) error {
		got, err := tx.Workspace(w.ID)
		if err == nil {
			final = got.HeadGen
		}
		return err
	})
	if int64(len(wins)) != final {
		t.Errorf("generation %d after %d distinct successful advances", final, len(wins))
	}
	for g, n := range wins {
		if n != 1 {
			t.Errorf("%d advances from generation %d succeeded, want 1", n, g)
		}
	}
}
