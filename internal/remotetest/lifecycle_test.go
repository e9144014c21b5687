package remotetest_test

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/blob"
	"github.com/forkspace/forkspace/blob/packblob"
	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/gc"
	"github.com/forkspace/forkspace/internal/s3test"
)

// TestSeedLifecycleOnBucket runs seed 003's lifecycle on PostgreSQL and
// versitygw: A with files, B forked from A, C from B, each writing bytes
// of its own; then B, C and A deleted in turn, each followed by a
// collection. Every file is one blob (above the 512-byte inline limit,
// below the chunker's minimum), so a file's blob address is the hash of
// its bytes. Forking puts no object in the bucket (listed before and
// after), and after each collection the store's blobs are exactly those
// of the files some live workspace still reaches: B's bytes stay while C
// (forked from B) lives, A's while A does; at the end the bucket is
// empty. With one object per blob ("objects") the bucket's listing is
// that set exactly, each collection removing the objects of the blobs it
// reclaimed; with packs (decision 022) the blobs are those the store
// lists (its pack index), a collection that reclaims nothing leaves the
// bucket as it was, and one that reclaims blobs deletes the packs left
// without a live blob.
func TestSeedLifecycleOnBucket(t *testing.T) {
	t.Run("objects", func(t *testing.T) { seedLifecycle(t, false) })
	t.Run("packs", func(t *testing.T) { seedLifecycle(t, true) })
}

func seedLifecycle(t *testing.T, packs bool) {
	ctx := context.Background()
	v := s3test.StartVersity(t, "seed")
	st, m := openBucketStore(t, v, "seed", "lifecycle", forkspace.PackOptions{Disable: !packs})
	// The blob addresses the store reports: its blob store's listing,
	// through its pack index when it packs.
	view, _, err := packblob.IfPackable(bucketBlobs(t, v, "seed", "lifecycle"), packblob.Options{Meta: m})
	if err != nil {
		t.Fatal(err)
	}
	if !packs {
		view = bucketBlobs(t, v, "seed", "lifecycle")
	}
	reported := func() []string {
		t.Helper()
		var hs []cas.Hash
		if err := view.List(ctx, func(i blob.Info) error { hs = append(hs, i.ID); return nil }); err != nil {
			t.Fatal(err)
		}
		return blobKeys("lifecycle", hs...)
	}
	files := func(seed uint64) map[string][]byte {
		return map[string][]byte{
			fmt.Sprintf("f%d-a.bin", seed): random(seed, 40<<10),
			fmt.Sprintf("f%d-b.bin", seed): random(seed+1, 200<<10),
			fmt.Sprintf("f%d-small", seed): random(seed+2, 100), // inline: no object
		}
	}
	hashes := func(fs map[string][]byte) []cas.Hash {
		var out []cas.Hash
		for _, data := range fs {
			if len(data) > 512 {
				out = append(out, cas.Sum(data))
			}
		}
		return out
	}
	write := func(w *forkspace.Workspace, fs map[string][]byte) {
		t.Helper()
		for name, data := range fs {
			if err := w.WriteFile(ctx, name, data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	check := func(name string, fs ...map[string][]byte) {
		t.Helper()
		w, err := st.Workspace(ctx, name)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range fs {
			for p, data := range f {
				if got, err := w.ReadFile(ctx, p); err != nil || string(got) != string(data) {
					t.Fatalf("%s/%s: %d bytes, %v", name, p, len(got), err)
				}
			}
		}
	}
	// collect runs a collection and checks that it removed exactly
	// reclaimed from the bucket, leaving exactly live.
	collect := func(step string, reclaimed, live []cas.Hash) {
		t.Helper()
		before, blobsBefore := keys(t, v, "seed", "lifecycle/"), reported()
		r, err := st.GC(ctx, forkspace.GCOptions{Grace: gc.NoGrace})
		if err != nil {
			t.Fatalf("%s: gc: %v", step, err)
		}
		after, blobsAfter := keys(t, v, "seed", "lifecycle/"), reported()
		if got, want := minus(blobsBefore, blobsAfter), blobKeys("lifecycle", reclaimed...); !slices.Equal(got, want) {
			t.Errorf("%s: gc removed blobs [%s], want [%s]", step, short(got), short(want))
		}
		if want := blobKeys("lifecycle", live...); !slices.Equal(blobsAfter, want) {
			t.Errorf("%s: the store holds blobs [%s], want [%s]", step, short(blobsAfter), short(want))
		}
		layout := map[bool]string{false: "lifecycle/blobs/", true: "lifecycle/packs/"}[packs]
		for _, k := range after {
			if !strings.HasPrefix(k, layout) {
				t.Fatalf("%s: object %s in the bucket, want only %s…", step, k, layout)
			}
		}
		switch {
		case !packs && !slices.Equal(after, blobsAfter):
			t.Errorf("%s: the bucket holds [%s], the store's blobs are [%s]", step, short(after), short(blobsAfter))
		case len(reclaimed) == 0 && !slices.Equal(before, after):
			t.Errorf("%s: a collection that reclaimed nothing changed the bucket: [%s] -> [%s]", step, short(before), short(after))
		case len(live) == 0 && len(after) > 0:
			t.Errorf("%s: nothing is live, the bucket holds [%s]", step, short(after))
		case packs && len(reclaimed) > 0 && len(after) >= len(before):
			t.Errorf("%s: reclaiming %d blobs deleted no pack: [%s] -> [%s]", step, len(reclaimed), short(before), short(after))
		}
		if r.Reclaimed.Blobs != int64(len(reclaimed)) {
			t.Errorf("%s: gc reports %d blobs reclaimed, want %d", step, r.Reclaimed.Blobs, len(reclaimed))
		}
		if c, err := st.Check(ctx); err != nil || !c.Clean() {
			t.Fatalf("%s: fsck: %v %+v", step, err, c)
		}
	}
	aFiles, bFiles, cFiles := files(10), files(20), files(30)
	aBlobs, bBlobs, cBlobs := hashes(aFiles), hashes(bFiles), hashes(cFiles)

	a, err := st.Create(ctx, "A", forkspace.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	write(a, aFiles)
	collect("A written", nil, aBlobs)

	before := keys(t, v, "seed", "lifecycle/")
	b, err := a.Fork(ctx, "B", forkspace.ForkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after := keys(t, v, "seed", "lifecycle/"); !slices.Equal(before, after) {
		t.Fatalf("forking B changed the bucket: [%s] -> [%s]", short(before), short(after))
	}
	write(b, bFiles)
	before = keys(t, v, "seed", "lifecycle/")
	c, err := b.Fork(ctx, "C", forkspace.ForkOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if after := keys(t, v, "seed", "lifecycle/"); !slices.Equal(before, after) {
		t.Fatalf("forking C changed the bucket: [%s] -> [%s]", short(before), short(after))
	}
	write(c, cFiles)
	all := slices.Concat(aBlobs, bBlobs, cBlobs)
	collect("C written", nil, all)
	check("C", aFiles, bFiles, cFiles)

	if err := st.Delete(ctx, "B"); err != nil {
		t.Fatal(err)
	}
	collect("B deleted", nil, all) // C still reads B's bytes
	check("C", aFiles, bFiles, cFiles)
	check("A", aFiles)

	if err := st.Delete(ctx, "C"); err != nil {
		t.Fatal(err)
	}
	collect("C deleted", slices.Concat(bBlobs, cBlobs), aBlobs)
	check("A", aFiles)

	if err := st.Delete(ctx, "A"); err != nil {
		t.Fatal(err)
	}
	collect("A deleted", aBlobs, nil)
}
