package gc_test

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/gc"
)

// TestGCConcurrent collects garbage without grace, over and over, while
// writers write, overwrite and delete files, fork, checkpoint and delete
// forks. Writers keep writing the same few contents, so they keep
// deduplicating onto blobs and bodies that a deletion just made garbage
// and that the collector is condemning. Every acknowledged write must read
// back afterwards, and the store must check clean.
func TestGCConcurrent(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := openEnv(t, t.TempDir())
	const writers, ops = 3, 120

	type result struct {
		ws  map[string]files // live workspaces this writer owns
		cps []modelCheckpoint
	}
	results := make([]result, writers)
	var done atomic.Bool
	var collections atomic.Int64
	var wg sync.WaitGroup
	wg.Go(func() {
		for !done.Load() {
			if _, err := e.s.GC(ctx, forkspace.GCOptions{Grace: gc.NoGrace}); err != nil {
				t.Errorf("gc: %v", err)
				return
			}
			collections.Add(1)
		}
	})
	var writing sync.WaitGroup
	for i := range writers {
		writing.Go(func() {
			r := rand.New(rand.NewPCG(uint64(i), 7))
			name := fmt.Sprintf("w%d", i)
			w, err := e.s.Create(ctx, name, forkspace.CreateOptions{})
			if err != nil {
				t.Error(err)
				return
			}
			model := files{}
			res := result{ws: map[string]files{}}
			forks := 0
			for range ops {
				file := fmt.Sprintf("f%d", r.IntN(4))
				switch op := r.IntN(10); {
				case op < 5:
					data := pool[1+r.IntN(len(pool)-1)]
					if err := w.WriteFile(ctx, file, data, 0o644); err != nil {
						t.Errorf("write: %v", err)
						return
					}
					model[file] = data
				case op < 7:
					if _, ok := model[file]; !ok {
						continue
					}
					if err := w.Remove(ctx, file); err != nil {
						t.Errorf("remove: %v", err)
						return
					}
					delete(model, file)
				case op < 8:
					c, err := w.Checkpoint(ctx, "")
					if err != nil {
						t.Errorf("checkpoint: %v", err)
						return
					}
					res.cps = append(res.cps, modelCheckpoint{id: c.ID, ws: name, files: maps.Clone(model)})
				default:
					// Fork, write to the fork, and delete it again half
					// of the time: its bytes become garbage at once.
					fork := fmt.Sprintf("%s-fork%d", name, forks)
					forks++
					f, err := w.Fork(ctx, fork, forkspace.ForkOptions{})
					if err != nil {
						t.Errorf("fork: %v", err)
						return
					}
					fm := maps.Clone(model)
					data := pool[1+r.IntN(len(pool)-1)]
					if err := f.WriteFile(ctx, "forked", data, 0o644); err != nil {
						t.Errorf("write fork: %v", err)
						return
					}
					fm["forked"] = data
					if r.IntN(2) == 0 {
						if err := e.s.Delete(ctx, fork); err != nil {
							t.Errorf("delete fork: %v", err)
							return
						}
					} else {
						res.ws[fork] = fm
					}
				}
			}
			res.ws[name] = model
			results[i] = res
		})
	}
	writing.Wait()
	done.Store(true)
	wg.Wait()
	if t.Failed() {
		return
	}
	t.Logf("%d collections ran beside %d writers × %d operations", collections.Load(), writers, ops)

	verify := func(when string) {
		for _, res := range results {
			for name, want := range res.ws {
				w, err := e.s.Workspace(ctx, name)
				if err != nil {
					t.Fatalf("%s: %v", when, err)
				}
				checkFiles(t, when+": workspace "+name, w, want)
			}
			for _, c := range res.cps {
				w, err := e.s.Workspace(ctx, c.ws)
				if err != nil {
					t.Fatal(err)
				}
				snap, err := w.At(ctx, c.id)
				if err != nil {
					t.Fatal(err)
				}
				checkFiles(t, when+": checkpoint "+c.id, snap, c.files)
			}
		}
		r, err := e.s.Check(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Clean() {
			t.Fatalf("%s: check found %+v", when, r.Problems)
		}
	}
	verify("after the concurrent run")
	if _, err := e.s.GC(ctx, forkspace.GCOptions{Grace: gc.NoGrace}); err != nil {
		t.Fatal(err)
	}
	verify("after a final collection")
}
