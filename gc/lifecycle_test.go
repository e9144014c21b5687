package gc_test

import (
	"context"
	"testing"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/gc"
	"github.com/forkspace/forkspace/internal/benchtree"
)

// TestSeedLifecycle reproduces the seed's example lifecycle: A created, B
// forked from A, C forked from B (each writing bytes of its own), then B,
// C and A deleted in turn. After each step a collection (no grace) must
// reclaim exactly the blobs and bodies that no surviving workspace
// reaches, and exactly the unreachable nodes, and the survivors must read
// back as written. At the end nothing is left.
func TestSeedLifecycle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := openEnv(t, t.TempDir())

	// Bytes written uniquely by each workspace: large files become blobs
	// (one of 600 KiB spans several chunks), small ones inline bodies.
	own := func(seed uint64) files {
		return files{
			"big":   benchtree.Bytes(seed, 40<<10),
			"huge":  benchtree.Bytes(seed+1, 600<<10),
			"small": benchtree.Bytes(seed+2, 300),
		}
	}
	write := func(ws *forkspace.Workspace, prefix string, f files) {
		t.Helper()
		for name, data := range f {
			if err := ws.WriteFile(ctx, prefix+name, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	prefixed := func(prefix string, f files) files {
		out := files{}
		for k, v := range f {
			out[prefix+k] = v
		}
		return out
	}
	union := func(fs ...files) files {
		out := files{}
		for _, f := range fs {
			for k, v := range f {
				out[k] = v
			}
		}
		return out
	}
	aFiles, bFiles, cFiles := prefixed("a-", own(10)), prefixed("b-", own(20)), prefixed("c-", own(30))

	// step runs a collection and checks what it reclaimed.
	step := func(name string, wantBodies, wantBlobs hashSet, live map[string]files) {
		t.Helper()
		blobsBefore, bodiesBefore, nodesBefore := e.stored()
		r, err := e.s.GC(ctx, forkspace.GCOptions{Grace: gc.NoGrace})
		if err != nil {
			t.Fatalf("%s: gc: %v", name, err)
		}
		blobsAfter, bodiesAfter, nodesAfter := e.stored()
		if got := blobsBefore.minus(blobsAfter); !equal(got, wantBlobs) {
			t.Errorf("%s: reclaimed blobs %v, want %v", name, got, wantBlobs)
		}
		if got := bodiesBefore.minus(bodiesAfter); !equal(got, wantBodies) {
			t.Errorf("%s: reclaimed bodies %v, want %v", name, got, wantBodies)
		}
		reach := e.reachableNodes()
		if got, want := nodesBefore.minus(nodesAfter), nodesBefore.minus(reach); !equal(got, want) {
			t.Errorf("%s: reclaimed %d nodes, want the %d unreachable ones", name, len(got), len(want))
		}
		if !equal(nodesAfter, reach) {
			t.Errorf("%s: %d nodes left, %d reachable", name, len(nodesAfter), len(reach))
		}
		if r.Reclaimed.Blobs != int64(len(wantBlobs)) || r.Reclaimed.Bodies != int64(len(wantBodies)) {
			t.Errorf("%s: report says %+v", name, r.Reclaimed)
		}
		for wsName, want := range live {
			ws, err := e.s.Workspace(ctx, wsName)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			checkFiles(t, name+": "+wsName, ws, want)
		}
		c, err := e.s.Check(ctx)
		if err != nil || !c.Clean() {
			t.Fatalf("%s: check: %v %+v", name, err, c)
		}
	}
	none := hashSet{}

	a, err := e.s.Create(ctx, "A", forkspace.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	write(a, "", aFiles)
	step("A created", none, none, map[string]files{"A": aFiles})

	b, err := a.Fork(ctx, "B", forkspace.ForkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	write(b, "", bFiles)
	step("B forked from A", none, none, map[string]files{"A": aFiles, "B": union(aFiles, bFiles)})

	c, err := b.Fork(ctx, "C", forkspace.ForkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	write(c, "", cFiles)
	cAll := union(aFiles, bFiles, cFiles)
	step("C forked from B", none, none, map[string]files{"A": aFiles, "B": union(aFiles, bFiles), "C": cAll})

	// B's bytes are still C's: nothing to reclaim.
	if err := e.s.Delete(ctx, "B"); err != nil {
		t.Fatal(err)
	}
	step("B deleted", none, none, map[string]files{"A": aFiles, "C": cAll})

	// C goes: what B and C wrote goes with it; A's bytes stay.
	if err := e.s.Delete(ctx, "C"); err != nil {
		t.Fatal(err)
	}
	bBodies, bChunks := bFiles.hashes()
	cBodies, cChunks := cFiles.hashes()
	step("C deleted", bBodies.union(cBodies), bChunks.union(cChunks), map[string]files{"A": aFiles})

	if err := e.s.Delete(ctx, "A"); err != nil {
		t.Fatal(err)
	}
	aBodies, aChunks := aFiles.hashes()
	step("A deleted", aBodies, aChunks, nil)

	blobs, bodies, nodes := e.stored()
	if len(blobs)+len(bodies)+len(nodes) != 0 {
		t.Fatalf("left after everything was deleted: %d blobs, %d bodies, %d nodes", len(blobs), len(bodies), len(nodes))
	}
}

func equal(a, b hashSet) bool {
	if len(a) != len(b) {
		return false
	}
	for k := range a {
		if !b[k] {
			return false
		}
	}
	return true
}
