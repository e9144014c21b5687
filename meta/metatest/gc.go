package metatest

import (
	"context"
	"errors"
	"io/fs"
	"slices"
	"testing"
	"time"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/meta"
)

// testTouch: storing an existing node or body refreshes its touch time;
// DeleteNodes and DeleteInline delete only objects touched before the
// given time and count what they deleted.
func testTouch(t *testing.T, s meta.Store) {
	n, b := meta.Object{Hash: hashOf("node"), Data: []byte("node")}, meta.Object{Hash: hashOf("body"), Data: []byte("body")}
	put := func() {
		update(t, s, func(tx meta.Tx) error {
			if err := tx.PutNodes([]meta.Object{n}); err != nil {
				return err
			}
			return tx.PutInline([]meta.Object{b})
		})
	}
	touched := func() (node, body time.Time) {
		view(t, s, func(tx meta.Tx) error {
			if err := tx.Nodes(func(oi meta.ObjectInfo) error {
				if oi.Hash == n.Hash && oi.Size == int64(len(n.Data)) {
					node = oi.TouchedAt
				}
				return nil
			}); err != nil {
				return err
			}
			return tx.InlineBodies(func(oi meta.ObjectInfo) error {
				if oi.Hash == b.Hash && oi.Size == int64(len(b.Data)) {
					body = oi.TouchedAt
				}
				return nil
			})
		})
		return node, body
	}
	put()
	n1, b1 := touched()
	if n1.IsZero() || b1.IsZero() {
		t.Fatalf("objects not listed: %v %v", n1, b1)
	}
	put()
	n2, b2 := touched()
	if !n2.After(n1) || !b2.After(b1) {
		t.Fatalf("a second put did not touch: node %v then %v, body %v then %v", n1, n2, b1, b2)
	}
	del := func(before time.Time) (nodes, bodies int) {
		update(t, s, func(tx meta.Tx) error {
			var err error
			if nodes, err = tx.DeleteNodes([]cas.Hash{n.Hash, hashOf("absent")}, before); err != nil {
				return err
			}
			bodies, err = tx.DeleteInline([]cas.Hash{b.Hash}, before)
			return err
		})
		return nodes, bodies
	}
	if nodes, bodies := del(n1.Add(time.Nanosecond)); nodes != 0 || bodies != 0 {
		t.Fatalf("deleted %d nodes, %d bodies touched since", nodes, bodies)
	}
	if nodes, bodies := del(time.Now().Add(time.Hour)); nodes != 1 || bodies != 1 {
		t.Fatalf("deleted %d nodes, %d bodies; want 1, 1", nodes, bodies)
	}
	if _, err := s.GetNode(context.Background(), n.Hash); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("deleted node still readable: %v", err)
	}
}

// testIntents: intents are listed, released, and forgotten by age.
func testIntents(t *testing.T, s meta.Store) {
	h1, h2 := hashOf("one"), hashOf("two")
	var id1, id2 int64
	update(t, s, func(tx meta.Tx) (err error) {
		if id1, err = tx.AddIntents([]cas.Hash{h1, h2}); err != nil {
			return err
		}
		id2, err = tx.AddIntents([]cas.Hash{h1})
		return err
	})
	if id1 == id2 {
		t.Fatalf("two intents share ID %d", id1)
	}
	list := func() []meta.Intent {
		var out []meta.Intent
		view(t, s, func(tx meta.Tx) error {
			return tx.Intents(func(in meta.Intent) error { out = append(out, in); return nil })
		})
		slices.SortFunc(out, func(a, b meta.Intent) int { return int(a.ID - b.ID) })
		return out
	}
	if got := list(); len(got) != 3 || got[0].Released || got[0].CreatedAt.IsZero() {
		t.Fatalf("intents: %+v", got)
	}
	update(t, s, func(tx meta.Tx) error { return tx.ReleaseIntents([]int64{id1, 12345}) })
	got := list()
	released := 0
	for _, in := range got {
		if in.Released != (in.ID == id1) {
			t.Errorf("intent %+v: released wrong", in)
		}
		if in.Released {
			released++
		}
	}
	if released != 2 {
		t.Fatalf("released %d rows, want 2", released)
	}
	// Forget released ones only.
	now := time.Now().Add(time.Hour)
	update(t, s, func(tx meta.Tx) error { return tx.ForgetIntents(now, time.Time{}) })
	if got := list(); len(got) != 1 || got[0].ID != id2 {
		t.Fatalf("after forgetting released intents: %+v", got)
	}
	update(t, s, func(tx meta.Tx) error { return tx.ForgetIntents(now, now) })
	if got := list(); len(got) != 0 {
		t.Fatalf("after forgetting pending intents: %+v", got)
	}
}

// testCondemn: the two-phase blob deletion. MarkDeleting reprieves blobs
// with a pending intent or a recent one; AddIntents of a blob being
// deleted is errdefs.ErrBusy until it is uncondemned.
func testCondemn(t *testing.T, s meta.Store) {
	pending, recent, old, doomed := hashOf("pending"), hashOf("recent"), hashOf("old"), hashOf("doomed")
	var oldID int64
	update(t, s, func(tx meta.Tx) (err error) {
		oldID, err = tx.AddIntents([]cas.Hash{old})
		return err
	})
	update(t, s, func(tx meta.Tx) error { return tx.ReleaseIntents([]int64{oldID}) })
	var since time.Time
	update(t, s, func(tx meta.Tx) (err error) {
		since, err = tx.Now()
		return err
	})
	update(t, s, func(tx meta.Tx) error {
		if _, err := tx.AddIntents([]cas.Hash{pending}); err != nil {
			return err
		}
		id, err := tx.AddIntents([]cas.Hash{recent})
		if err != nil {
			return err
		}
		return tx.ReleaseIntents([]int64{id})
	})
	update(t, s, func(tx meta.Tx) error { return tx.Condemn([]cas.Hash{pending, recent, old, doomed}) })
	var deleting []cas.Hash
	update(t, s, func(tx meta.Tx) (err error) {
		deleting, err = tx.MarkDeleting(since)
		return err
	})
	slices.SortFunc(deleting, func(a, b cas.Hash) int { return slices.Compare(a[:], b[:]) })
	want := []cas.Hash{old, doomed}
	slices.SortFunc(want, func(a, b cas.Hash) int { return slices.Compare(a[:], b[:]) })
	if !slices.Equal(deleting, want) {
		t.Fatalf("deleting %v, want old and doomed", deleting)
	}
	// Condemning again keeps the deleting state.
	update(t, s, func(tx meta.Tx) error { return tx.Condemn([]cas.Hash{doomed}) })
	view(t, s, func(tx meta.Tx) error {
		cs, err := tx.Condemned()
		if err != nil {
			return err
		}
		if len(cs) != 2 || !cs[0].Deleting || !cs[1].Deleting {
			t.Errorf("condemned: %+v", cs)
		}
		return nil
	})
	err := s.Update(context.Background(), func(tx meta.Tx) error {
		_, err := tx.AddIntents([]cas.Hash{pending, doomed})
		return err
	})
	wantErr(t, "AddIntents of a blob being deleted", err, errdefs.ErrBusy)
	update(t, s, func(tx meta.Tx) error { return tx.Uncondemn([]cas.Hash{doomed, old}) })
	update(t, s, func(tx meta.Tx) error {
		_, err := tx.AddIntents([]cas.Hash{doomed})
		return err
	})
	view(t, s, func(tx meta.Tx) error {
		cs, err := tx.Condemned()
		if len(cs) != 0 {
			t.Errorf("condemned after uncondemning: %+v", cs)
		}
		return err
	})
}
