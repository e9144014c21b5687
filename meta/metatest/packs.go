package metatest

import (
	"errors"
	"fmt"
	"io/fs"
	"testing"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/meta"
)

// testPacks walks a pack through its states: recorded, indexed (a blob
// already packed elsewhere keeps its place), entries dropped and moved,
// retired only once empty, deleted only once retired.
func testPacks(t *testing.T, s meta.Store) {
	p1, p2 := hashOf("pack 1"), hashOf("pack 2")
	a, b, c := hashOf("a"), hashOf("b"), hashOf("c")
	entry := func(h cas.Hash, off, size int64) meta.PackEntry {
		return meta.PackEntry{Hash: h, Offset: off, Size: size}
	}
	packs := func() map[cas.Hash]meta.Pack {
		out := map[cas.Hash]meta.Pack{}
		view(t, s, func(tx meta.Tx) error {
			return tx.Packs(func(p meta.Pack) error { out[p.ID] = p; return nil })
		})
		return out
	}
	find := func(h cas.Hash) (meta.PackEntry, error) {
		var e meta.PackEntry
		err := s.View(t.Context(), func(tx meta.Tx) error {
			var err error
			e, err = tx.PackEntry(h)
			return err
		})
		return e, err
	}

	update(t, s, func(tx meta.Tx) error { return tx.AddPack(p1, 1000) })
	wantErr(t, "recording a pack twice", s.Update(t.Context(), func(tx meta.Tx) error { return tx.AddPack(p1, 1000) }), fs.ErrExist)
	if p := packs()[p1]; p.State != meta.PackUploading || p.Size != 1000 || p.CreatedAt.IsZero() || p.LiveBlobs != 0 {
		t.Fatalf("recorded pack: %+v", p)
	}
	if _, err := find(a); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("entry of a blob not indexed yet: %v", err)
	}
	wantErr(t, "indexing an unrecorded pack", s.Update(t.Context(), func(tx meta.Tx) error {
		return tx.IndexPack(p2, []meta.PackEntry{entry(c, 0, 1)})
	}), fs.ErrNotExist)
	update(t, s, func(tx meta.Tx) error {
		return tx.IndexPack(p1, []meta.PackEntry{entry(a, 24, 100), entry(b, 124, 200)})
	})
	wantErr(t, "indexing a live pack again", s.Update(t.Context(), func(tx meta.Tx) error {
		return tx.IndexPack(p1, []meta.PackEntry{entry(c, 0, 1)})
	}), fs.ErrNotExist)
	if e, err := find(b); err != nil || e.Pack != p1 || e.Offset != 124 || e.Size != 200 || e.CreatedAt.IsZero() {
		t.Fatalf("entry of b: %+v, %v", e, err)
	}

	// A second pack holding a again and c: a stays where it was.
	update(t, s, func(tx meta.Tx) error {
		if err := tx.AddPack(p2, 500); err != nil {
			return err
		}
		return tx.IndexPack(p2, []meta.PackEntry{entry(a, 24, 100), entry(c, 124, 50)})
	})
	if e, _ := find(a); e.Pack != p1 {
		t.Fatalf("re-indexing moved a to %s", e.Pack.Short())
	}
	ps := packs()
	if p := ps[p1]; p.State != meta.PackLive || p.LiveBlobs != 2 || p.LiveBytes != 300 {
		t.Fatalf("pack 1: %+v", p)
	}
	if p := ps[p2]; p.LiveBlobs != 1 || p.LiveBytes != 50 {
		t.Fatalf("pack 2: %+v", p)
	}
	n := 0
	view(t, s, func(tx meta.Tx) error {
		return tx.PackEntries(p1, func(e meta.PackEntry) error {
			if e.Pack != p1 {
				t.Errorf("entry of another pack listed: %+v", e)
			}
			n++
			return nil
		})
	})
	all := 0
	view(t, s, func(tx meta.Tx) error {
		return tx.PackEntries(cas.Hash{}, func(meta.PackEntry) error { all++; return nil })
	})
	if n != 2 || all != 3 {
		t.Fatalf("listed %d entries of pack 1 and %d in all, want 2 and 3", n, all)
	}

	// Pack 1 is not retired while entries are in it, nor deleted before.
	var retired bool
	update(t, s, func(tx meta.Tx) error {
		var err error
		retired, err = tx.RetirePack(p1)
		if err != nil {
			return err
		}
		return tx.DeletePack(p1)
	})
	if retired || packs()[p1].State != meta.PackLive {
		t.Fatal("a pack with entries was retired or deleted")
	}
	// Move a into pack 2 (only entries still in pack 1 move), drop b.
	var moved int
	before, _ := find(a)
	update(t, s, func(tx meta.Tx) error {
		var err error
		moved, err = tx.MovePackEntries(p1, []meta.PackEntry{{Hash: a, Pack: p2, Offset: 300}, {Hash: c, Pack: p2, Offset: 400}})
		if err != nil {
			return err
		}
		return tx.DropPackEntries([]cas.Hash{b, hashOf("never packed")})
	})
	if moved != 1 {
		t.Fatalf("moved %d entries, want 1", moved)
	}
	if e, _ := find(a); e.Pack != p2 || e.Offset != 300 || e.Size != 100 || !e.CreatedAt.Equal(before.CreatedAt) {
		t.Fatalf("moved entry: %+v (was %+v)", e, before)
	}
	if e, _ := find(c); e.Offset != 124 {
		t.Fatalf("an entry of another pack moved: %+v", e)
	}
	if _, err := find(b); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("dropped entry: %v", err)
	}
	update(t, s, func(tx meta.Tx) error {
		var err error
		retired, err = tx.RetirePack(p1)
		return err
	})
	p := packs()[p1]
	if !retired || p.State != meta.PackRetired || p.RetiredAt.IsZero() || p.LiveBlobs != 0 {
		t.Fatalf("empty pack after RetirePack: %v %+v", retired, p)
	}
	update(t, s, func(tx meta.Tx) error { return tx.DeletePack(p1) })
	if _, ok := packs()[p1]; ok {
		t.Fatal("retired pack not deleted")
	}
	wantErr(t, "retiring a missing pack", s.Update(t.Context(), func(tx meta.Tx) error {
		_, err := tx.RetirePack(p1)
		return err
	}), fs.ErrNotExist)

	// A pack of 70 entries (several statements' worth), one of them a
	// blob indexed elsewhere and one listed twice: 68 land in it.
	p3 := hashOf("pack 3")
	var many []meta.PackEntry
	for i := range 68 {
		many = append(many, entry(hashOf(fmt.Sprint("blob ", i)), int64(24+i*10), 10))
	}
	many = append(many, entry(c, 0, 50), many[5])
	update(t, s, func(tx meta.Tx) error {
		if err := tx.AddPack(p3, 1000); err != nil {
			return err
		}
		return tx.IndexPack(p3, many)
	})
	if p := packs()[p3]; p.LiveBlobs != 68 || p.LiveBytes != 680 {
		t.Fatalf("pack of 70 entries: %+v", p)
	}
	if e, _ := find(hashOf("blob 67")); e.Pack != p3 || e.Offset != 24+67*10 {
		t.Fatalf("last entry of the large pack: %+v", e)
	}
}
