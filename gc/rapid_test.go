package gc_test

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/gc"
)

// steps counts the property test's steps over all runs.
var steps atomic.Int64

// pool is the contents files are written with: shared between
// workspaces, so writes dedup onto blobs and bodies that deletions made
// garbage.
var pool = [][]byte{
	nil,
	[]byte("hello"),
	randomBytes(1, 400),
	randomBytes(2, inlineMax+1),
	randomBytes(3, 3000),
	randomBytes(4, 40<<10),
	randomBytes(5, 300<<10),
}

type modelCheckpoint struct {
	id, ws string
	files  files
}

// model is the expected state of a store.
type model struct {
	ws  map[string]files
	cps []modelCheckpoint
	// bases are the states forks started from: each fork keeps its own
	// as long as it lives (the merge base of later merges).
	bases []modelCheckpoint
	next  int
}

// TestGCModel interleaves writes, overwrites, deletions, forks,
// checkpoints, restores, workspace and checkpoint deletions and
// collections (without grace and with a grace that keeps everything), and
// after every collection re-reads every live workspace and checkpoint and
// compares what is stored with what the model reaches: after a collection
// without grace exactly the blobs and bodies of live files and exactly the
// reachable nodes remain. At the end, with nothing live, nothing remains.
func TestGCModel(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(rt *rapid.T) {
		ctx := context.Background()
		e := openEnv(t, t.TempDir())
		defer e.s.Close()
		m := &model{ws: map[string]files{}}
		create := func() {
			name := fmt.Sprintf("w%d", m.next)
			m.next++
			if _, err := e.s.Create(ctx, name, forkspace.CreateOptions{}); err != nil {
				rt.Fatal(err)
			}
			m.ws[name] = files{}
		}
		create()
		open := func(name string) *forkspace.Workspace { return workspace(rt, e, name) }
		pickWS := func(rt *rapid.T) string {
			return rapid.SampledFrom(slices.Sorted(maps.Keys(m.ws))).Draw(rt, "ws")
		}
		actions := map[string]func(*rapid.T){
			"write": func(rt *rapid.T) {
				ws := pickWS(rt)
				name := fmt.Sprintf("f%d", rapid.IntRange(0, 5).Draw(rt, "file"))
				data := pool[rapid.IntRange(0, len(pool)-1).Draw(rt, "content")]
				if err := open(ws).WriteFile(ctx, name, data, 0o644); err != nil {
					rt.Fatal(err)
				}
				m.ws[ws][name] = data
			},
			"remove": func(rt *rapid.T) {
				ws := pickWS(rt)
				if len(m.ws[ws]) == 0 {
					return
				}
				name := rapid.SampledFrom(slices.Sorted(maps.Keys(m.ws[ws]))).Draw(rt, "file")
				if err := open(ws).Remove(ctx, name); err != nil {
					rt.Fatal(err)
				}
				delete(m.ws[ws], name)
			},
			"fork": func(rt *rapid.T) {
				ws := pickWS(rt)
				name := fmt.Sprintf("w%d", m.next)
				m.next++
				if _, err := open(ws).Fork(ctx, name, forkspace.ForkOptions{}); err != nil {
					rt.Fatal(err)
				}
				m.ws[name] = maps.Clone(m.ws[ws])
				m.bases = append(m.bases, modelCheckpoint{ws: name, files: maps.Clone(m.ws[ws])})
			},
			"checkpoint": func(rt *rapid.T) {
				ws := pickWS(rt)
				c, err := open(ws).Checkpoint(ctx, "")
				if err != nil {
					rt.Fatal(err)
				}
				m.cps = append(m.cps, modelCheckpoint{id: c.ID, ws: ws, files: maps.Clone(m.ws[ws])})
			},
			"restore": func(rt *rapid.T) {
				if len(m.cps) == 0 {
					return
				}
				c := m.cps[rapid.IntRange(0, len(m.cps)-1).Draw(rt, "checkpoint")]
				if err := open(c.ws).Restore(ctx, c.id); err != nil {
					rt.Fatal(err)
				}
				m.ws[c.ws] = maps.Clone(c.files)
			},
			"deleteWorkspace": func(rt *rapid.T) {
				ws := pickWS(rt)
				if err := e.s.Delete(ctx, ws); err != nil {
					rt.Fatal(err)
				}
				delete(m.ws, ws)
				m.cps = slices.DeleteFunc(m.cps, func(c modelCheckpoint) bool { return c.ws == ws })
				m.bases = slices.DeleteFunc(m.bases, func(c modelCheckpoint) bool { return c.ws == ws })
				if len(m.ws) == 0 {
					create()
				}
			},
			"deleteCheckpoint": func(rt *rapid.T) {
				if len(m.cps) == 0 {
					return
				}
				i := rapid.IntRange(0, len(m.cps)-1).Draw(rt, "checkpoint")
				if err := open(m.cps[i].ws).DeleteCheckpoint(ctx, m.cps[i].id); err != nil {
					rt.Fatal(err)
				}
				m.cps = slices.Delete(m.cps, i, i+1)
			},
			"gc": func(rt *rapid.T) {
				collect(rt, e, m, gc.NoGrace)
			},
			"gcGrace": func(rt *rapid.T) {
				collect(rt, e, m, time.Hour)
			},
		}
		// Writes are weighted up: they are cheap, and they create the
		// garbage and the dedup the collections then face.
		names := append(slices.Sorted(maps.Keys(actions)), "write", "write", "write")
		n := rapid.IntRange(15, 60).Draw(rt, "steps")
		for range n {
			actions[rapid.SampledFrom(names).Draw(rt, "action")](rt)
			steps.Add(1)
		}
		for ws := range m.ws {
			if err := e.s.Delete(ctx, ws); err != nil {
				rt.Fatal(err)
			}
		}
		m.ws, m.cps, m.bases = map[string]files{}, nil, nil
		collect(rt, e, m, gc.NoGrace)
		blobs, bodies, nodes := e.stored()
		if len(blobs)+len(bodies)+len(nodes) != 0 {
			rt.Fatalf("left with nothing live: %d blobs, %d bodies, %d nodes", len(blobs), len(bodies), len(nodes))
		}
	})
	t.Logf("%d steps", steps.Load())
}

// collect runs a collection with the given grace and checks the store
// against the model: every live file reads back; nothing a live file uses
// is gone. Without grace it then folds every workspace (entries a staging
// row shadows stay reachable until their tree is folded) and collects
// again, once the store has folded the checkpoints' staging deltas too:
// exactly what live files use must remain.
func collect(rt *rapid.T, e *env, m *model, grace time.Duration) {
	ctx := context.Background()
	blobsBefore, bodiesBefore, _ := e.stored()
	if _, err := e.s.GC(ctx, forkspace.GCOptions{Grace: grace}); err != nil {
		rt.Fatal(err)
	}
	blobs, bodies, _ := e.stored()
	wantBodies, wantBlobs := hashSet{}, hashSet{}
	add := func(f files) {
		b, c := f.hashes()
		maps.Copy(wantBodies, b)
		maps.Copy(wantBlobs, c)
	}
	for ws, f := range m.ws {
		add(f)
		checkFiles(rt, "workspace "+ws, workspace(rt, e, ws), f)
	}
	for _, c := range m.bases {
		add(c.files)
	}
	for _, c := range m.cps {
		add(c.files)
		snap, err := workspace(rt, e, c.ws).At(ctx, c.id)
		if err != nil {
			rt.Fatal(err)
		}
		checkFiles(rt, "checkpoint "+c.id, snap, c.files)
	}
	if lost := wantBlobs.minus(blobs).union(wantBodies.minus(bodies)); len(lost) > 0 {
		rt.Fatalf("collection lost live objects %v", lost)
	}
	if grace > 0 {
		// Everything is younger than the grace period: nothing goes.
		if !equal(blobs, blobsBefore) || !equal(bodies, bodiesBefore) {
			rt.Fatalf("collection with grace reclaimed %d blobs, %d bodies", len(blobsBefore.minus(blobs)), len(bodiesBefore.minus(bodies)))
		}
		return
	}
	for ws := range m.ws {
		if err := workspace(rt, e, ws).Fold(ctx); err != nil {
			rt.Fatal(err)
		}
	}
	e.settle(rt)
	if _, err := e.s.GC(ctx, forkspace.GCOptions{Grace: grace}); err != nil {
		rt.Fatal(err)
	}
	blobs, bodies, nodes := e.stored()
	if !equal(blobs, wantBlobs) {
		rt.Fatalf("blobs: stored %d, live files use %d (missing %v, extra %v)", len(blobs), len(wantBlobs), wantBlobs.minus(blobs), blobs.minus(wantBlobs))
	}
	if !equal(bodies, wantBodies) {
		rt.Fatalf("bodies: stored %d, live files use %d (missing %v, extra %v)", len(bodies), len(wantBodies), wantBodies.minus(bodies), bodies.minus(wantBodies))
	}
	if reach := e.reachableNodes(); !equal(nodes, reach) {
		rt.Fatalf("nodes: stored %d, reachable %d", len(nodes), len(reach))
	}
}

func workspace(rt *rapid.T, e *env, name string) *forkspace.Workspace {
	w, err := e.s.Workspace(context.Background(), name)
	if err != nil {
		rt.Fatal(err)
	}
	return w
}
