package gc_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/audit"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/gc"
	"github.com/forkspace/forkspace/internal/benchtree"
)

// steps counts the property test's steps over all runs.
var steps atomic.Int64

// pool is the contents files are written with: shared between
// workspaces, so writes dedup onto blobs and bodies that deletions made
// garbage.
var pool = [][]byte{
	nil,
	[]byte("hello"),
	benchtree.Bytes(1, 400),
	benchtree.Bytes(2, inlineMax+1),
	benchtree.Bytes(3, 3000),
	benchtree.Bytes(4, 40<<10),
	benchtree.Bytes(5, 300<<10),
}

type modelCheckpoint struct {
	id, ws string
	files  files
	// conflict marks a version kept for a merge's conflicts: it goes
	// when the last conflict of its workspace is resolved.
	conflict bool
}

// model is the expected state of a store.
type model struct {
	ws  map[string]files
	cps []modelCheckpoint
	// bases are the hidden states a workspace keeps as long as it lives:
	// the state a fork started from and each state a merge brought in
	// (merge bases of later merges), and while conflicts are unresolved
	// the base and ours versions they refer to.
	bases []modelCheckpoint
	// conflicts are the unresolved conflicts' paths of each workspace.
	conflicts map[string][]string
	// hist are the states audited calls left each workspace in, oldest
	// first, as far as the retention policy keeps them.
	hist map[string][]files
	// keep is the retention policy's step count.
	keep int
	next int
}

// kept returns the states of ws the retention policy keeps (the store
// refuses to read older ones even before it drops them).
func (m *model) kept(ws string) []files {
	h := m.hist[ws]
	return h[len(h)-min(len(h), m.keep):]
}

// recorded appends the state an audited call left ws in.
func (m *model) recorded(ws string) {
	m.hist[ws] = append(m.hist[ws], maps.Clone(m.ws[ws]))
	m.prune(ws)
}

// prune drops the states of ws past the retention policy, as the store
// does at ws's next audited call and at a collection.
func (m *model) prune(ws string) { m.hist[ws] = slices.Clone(m.kept(ws)) }

// forget drops everything of workspace ws.
func (m *model) forget(ws string) {
	delete(m.ws, ws)
	delete(m.hist, ws)
	delete(m.conflicts, ws)
	mine := func(c modelCheckpoint) bool { return c.ws == ws }
	m.cps = slices.DeleteFunc(m.cps, mine)
	m.bases = slices.DeleteFunc(m.bases, mine)
}

// TestGCModel interleaves writes, overwrites, deletions, forks,
// checkpoints, restores, workspace and checkpoint deletions, merges
// (between any two workspaces with a merge base, under every policy),
// cherry-picks of a path or of its changes, resolutions of conflicts, audited writes and restores that record
// states, reads of recorded states ("w@~N"), changes of the retention
// policy, and collections (without grace and with a grace that keeps
// everything). After every collection it re-reads every live workspace,
// checkpoint and kept recorded state and compares what is stored with what
// the model reaches: after a collection without grace exactly the blobs
// and bodies of live files (heads, checkpoints, fork bases, merged states,
// conflict versions, kept states) and exactly the reachable nodes remain.
// At the end, with nothing live, nothing remains.
func TestGCModel(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(rt *rapid.T) {
		ctx := context.Background()
		e := openEnv(t, t.TempDir())
		defer e.s.Close()
		m := &model{ws: map[string]files{}, conflicts: map[string][]string{}, hist: map[string][]files{}, keep: audit.DefaultRetention.Steps}
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
		audited := func(name string) *forkspace.Audited {
			a, err := e.s.Audited(ctx, name, forkspace.AuditOptions{Actor: audit.Actor{Name: "model"}})
			if err != nil {
				rt.Fatal(err)
			}
			return a
		}
		writer := func(name string, logged bool) interface {
			WriteFile(context.Context, string, []byte, fs.FileMode) error
			Remove(context.Context, string) error
		} {
			if logged {
				return audited(name)
			}
			return open(name)
		}
		pickWS := func(rt *rapid.T) string {
			return rapid.SampledFrom(slices.Sorted(maps.Keys(m.ws))).Draw(rt, "ws")
		}
		// write and remove change a file of a workspace, through an
		// audited call (which records the state it leaves) or not.
		write := func(rt *rapid.T, logged bool) {
			ws := pickWS(rt)
			name := fmt.Sprintf("f%d", rapid.IntRange(0, 5).Draw(rt, "file"))
			data := pool[rapid.IntRange(0, len(pool)-1).Draw(rt, "content")]
			if err := writer(ws, logged).WriteFile(ctx, name, data, 0o644); err != nil {
				rt.Fatal(err)
			}
			m.ws[ws][name] = data
			if logged {
				m.recorded(ws)
			}
		}
		remove := func(rt *rapid.T, logged bool) {
			ws := pickWS(rt)
			if len(m.ws[ws]) == 0 {
				return
			}
			name := rapid.SampledFrom(slices.Sorted(maps.Keys(m.ws[ws]))).Draw(rt, "file")
			if err := writer(ws, logged).Remove(ctx, name); err != nil {
				rt.Fatal(err)
			}
			delete(m.ws[ws], name)
			if logged {
				m.recorded(ws)
			}
		}
		actions := map[string]func(*rapid.T){
			"write":  func(rt *rapid.T) { write(rt, false) },
			"remove": func(rt *rapid.T) { remove(rt, false) },
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
			"auditedWrite":  func(rt *rapid.T) { write(rt, true) },
			"auditedRemove": func(rt *rapid.T) { remove(rt, true) },
			"restoreState": func(rt *rapid.T) {
				ws := pickWS(rt)
				h := m.kept(ws)
				if len(h) == 0 {
					return
				}
				back := rapid.IntRange(0, len(h)-1).Draw(rt, "back")
				if err := audited(ws).Restore(ctx, fmt.Sprintf("~%d", back)); err != nil {
					rt.Fatal(err)
				}
				m.ws[ws] = maps.Clone(h[len(h)-1-back])
				m.recorded(ws)
			},
			"readState": func(rt *rapid.T) {
				ws := pickWS(rt)
				h := m.kept(ws)
				back := rapid.IntRange(0, len(h)+1).Draw(rt, "back")
				state := fmt.Sprintf("%s@~%d", ws, back)
				snap, err := e.s.Snapshot(ctx, state)
				if back >= len(h) {
					if !errors.Is(err, forkspace.ErrHistoryExpired) {
						rt.Fatalf("%s of %d kept states: %v", state, len(h), err)
					}
					return
				}
				if err != nil {
					rt.Fatal(err)
				}
				checkFiles(rt, state, snap, h[len(h)-1-back])
			},
			"retention": func(rt *rapid.T) {
				m.keep = rapid.IntRange(1, 5).Draw(rt, "keep")
				if err := e.s.SetHistoryRetention(ctx, audit.Retention{Steps: m.keep, Age: 24 * time.Hour}); err != nil {
					rt.Fatal(err)
				}
			},
			"merge": func(rt *rapid.T) {
				if len(m.ws) < 2 {
					return
				}
				into := pickWS(rt)
				from := rapid.SampledFrom(slices.DeleteFunc(slices.Sorted(maps.Keys(m.ws)), func(s string) bool { return s == into })).Draw(rt, "from")
				name := fmt.Sprintf("f%d", rapid.IntRange(0, 5).Draw(rt, "file"))
				if rapid.Bool().Draw(rt, "clash") {
					// Both sides write one file: a conflict, or the
					// same change on both sides.
					for _, ws := range []string{into, from} {
						data := pool[rapid.IntRange(0, len(pool)-1).Draw(rt, "content")]
						if err := open(ws).WriteFile(ctx, name, data, 0o644); err != nil {
							rt.Fatal(err)
						}
						m.ws[ws][name] = data
					}
				}
				policy := rapid.SampledFrom([]forkspace.MergePolicy{forkspace.MergeRecord, forkspace.MergeFail, forkspace.MergeOurs, forkspace.MergeTheirs}).Draw(rt, "policy")
				var pick []string
				if rapid.Bool().Draw(rt, "pick") {
					// A cherry-pick of the changes at that file: a merge
					// that keeps no merged state, and for its conflicts
					// theirs' version too.
					pick = []string{name}
				}
				merge(rt, e, m, into, from, policy, pick)
			},
			"cherryPick": func(rt *rapid.T) {
				if len(m.ws) < 2 {
					return
				}
				into := pickWS(rt)
				from := rapid.SampledFrom(slices.DeleteFunc(slices.Sorted(maps.Keys(m.ws)), func(s string) bool { return s == into })).Draw(rt, "from")
				names := slices.Sorted(maps.Keys(m.ws[from]))
				if len(names) == 0 {
					return
				}
				p := rapid.SampledFrom(names).Draw(rt, "path")
				r, err := open(into).CherryPick(ctx, from, []string{p}, forkspace.CherryPickOptions{})
				if err != nil {
					rt.Fatal(err)
				}
				m.cps = append(m.cps, modelCheckpoint{id: r.Checkpoint, ws: into, files: maps.Clone(m.ws[into])})
				m.ws[into][p] = m.ws[from][p]
			},
			"resolve": func(rt *rapid.T) {
				var ws []string
				for w, cs := range m.conflicts {
					if len(cs) > 0 {
						ws = append(ws, w)
					}
				}
				if len(ws) == 0 {
					return
				}
				w := rapid.SampledFrom(slices.Sorted(slices.Values(ws))).Draw(rt, "ws")
				p := rapid.SampledFrom(m.conflicts[w]).Draw(rt, "path")
				take := rapid.SampledFrom([]forkspace.Take{forkspace.TakeOurs, forkspace.TakeTheirs}).Draw(rt, "take")
				if err := open(w).Resolve(ctx, p, forkspace.Resolution{Take: take}); err != nil {
					rt.Fatal(err)
				}
				m.conflicts[w] = slices.DeleteFunc(m.conflicts[w], func(s string) bool { return s == p })
				if len(m.conflicts[w]) == 0 {
					m.bases = slices.DeleteFunc(m.bases, func(c modelCheckpoint) bool { return c.ws == w && c.conflict })
				}
				// Which version a side's is, is the merge tests' business:
				// the model takes what the resolution wrote.
				m.ws[w] = readFiles(rt, "workspace "+w+" after resolve", open(w))
			},
			"deleteWorkspace": func(rt *rapid.T) {
				ws := pickWS(rt)
				if err := e.s.Delete(ctx, ws); err != nil {
					rt.Fatal(err)
				}
				m.forget(ws)
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
		// garbage and the dedup the collections then face; forks and
		// merges too, so that both sides of merges change and clash.
		names := append(slices.Sorted(maps.Keys(actions)), "write", "write", "write", "auditedWrite", "fork", "merge", "merge", "resolve")
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
		for ws := range m.ws {
			m.forget(ws)
		}
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
	// The collection dropped the states past the retention policy.
	for ws := range m.hist {
		m.prune(ws)
		h := m.hist[ws]
		for i, f := range h {
			add(f)
			state := fmt.Sprintf("%s@~%d", ws, len(h)-1-i)
			snap, err := e.s.Snapshot(ctx, state)
			if err != nil {
				rt.Fatalf("%s: %v", state, err)
			}
			checkFiles(rt, state, snap, f)
		}
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
	// A recorded state is a root and a delta: the root's tree may still
	// hold what the delta shadows, and stays whole while the state is kept.
	b, c := e.stateTrees()
	maps.Copy(wantBodies, b)
	maps.Copy(wantBlobs, c)
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

// merge merges workspace from into workspace into with policy (nothing if
// they have no merge base), or with pick only theirs' changes at those
// paths (a cherry-pick of changes), and updates the model: the checkpoint taken
// before, the merged state kept as the next merge base and, for recorded
// conflicts, the base and ours versions kept until they are resolved.
// When each path changed on one side at most, the result is both sides'
// changes and no conflict; otherwise the model takes what the merge wrote
// (what a clash becomes is the merge tests' business, what stays
// reachable is this test's).
func merge(rt *rapid.T, e *env, m *model, into, from string, policy forkspace.MergePolicy, pick []string) {
	ctx := context.Background()
	baseState, err := e.s.MergeBase(ctx, into, from)
	if errors.Is(err, forkspace.ErrNoMergeBase) {
		return
	}
	if err != nil {
		rt.Fatal(err)
	}
	snap, err := e.s.Snapshot(ctx, baseState)
	if err != nil {
		rt.Fatal(err)
	}
	base, ours, theirs := readFiles(rt, "base "+baseState, snap), maps.Clone(m.ws[into]), maps.Clone(m.ws[from])
	w := workspace(rt, e, into)
	var r forkspace.MergeResult
	if pick == nil {
		r, err = w.Merge(ctx, from, forkspace.MergeOptions{Policy: policy})
	} else {
		r, err = w.CherryPick(ctx, from, pick, forkspace.CherryPickOptions{Changes: true, Policy: policy})
	}
	if policy == forkspace.MergeFail && errors.Is(err, errdefs.ErrConflict) {
		checkFiles(rt, "workspace after a merge refused for conflicts", w, ours)
		return
	}
	if err != nil {
		rt.Fatal(err)
	}
	m.cps = append(m.cps, modelCheckpoint{id: r.Checkpoint, ws: into, files: ours})
	if pick == nil {
		m.bases = append(m.bases, modelCheckpoint{ws: into, files: theirs})
	}
	var unresolved []string
	for _, c := range r.Conflicts {
		if c.Resolved == "" {
			unresolved = append(unresolved, c.Path)
		}
	}
	if len(unresolved) > 0 {
		m.bases = append(m.bases, modelCheckpoint{ws: into, files: base, conflict: true}, modelCheckpoint{ws: into, files: ours, conflict: true})
		if pick != nil {
			m.bases = append(m.bases, modelCheckpoint{ws: into, files: theirs, conflict: true})
		}
		m.conflicts[into] = slices.Compact(slices.Sorted(slices.Values(append(m.conflicts[into], unresolved...))))
	}
	got := readFiles(rt, "workspace "+into+" after the merge", w)
	if want, ok := disjointMerge(base, ours, theirs); ok && pick == nil {
		if len(r.Conflicts) > 0 {
			rt.Fatalf("merge of %s into %s, changes on one side per path: conflicts %+v", from, into, r.Conflicts)
		}
		checkFiles(rt, "workspace "+into+" after the merge", w, want)
	}
	m.ws[into] = got
}

// disjointMerge returns both sides' changes from base when no path
// changed on both sides (ok false otherwise).
func disjointMerge(base, ours, theirs files) (files, bool) {
	same := func(a, b files, p string) bool {
		x, okA := a[p]
		y, okB := b[p]
		return okA == okB && string(x) == string(y)
	}
	out := files{}
	for _, f := range []files{base, ours, theirs} {
		for p := range f {
			side := ours
			switch {
			case same(ours, base, p):
				side = theirs
			case !same(theirs, base, p):
				return nil, false
			}
			if data, ok := side[p]; ok {
				out[p] = data
			}
		}
	}
	return out, true
}

// readFiles reads the files of st's root directory.
func readFiles(t fataler, what string, st readable) files {
	t.Helper()
	ctx := context.Background()
	ents, err := st.ReadDir(ctx, ".")
	if err != nil {
		t.Fatalf("%s: read dir: %v", what, err)
	}
	out := files{}
	for _, e := range ents {
		if out[e.Name()], err = st.ReadFile(ctx, e.Name()); err != nil {
			t.Fatalf("%s: read %s: %v", what, e.Name(), err)
		}
	}
	return out
}
