package kv

import (
	"context"

	"github.com/forkspace/forkspace/cas"
	"github.com/google/btree"
)

// Overlay is an in-memory, ordered set of staged mutations with sequence
// numbers: the mirror of a workspace's staging rows. Not safe for
// concurrent use; the owner serialises access.
type Overlay struct {
	t *btree.BTreeG[staged]
}

type staged struct {
	key, value []byte
	deleted    bool
	seq        int64
}

func lessStaged(a, b staged) bool { return compare(a.key, b.key) < 0 }

// NewOverlay returns an empty overlay.
func NewOverlay() *Overlay { return &Overlay{t: btree.NewG(32, lessStaged)} }

// Set stages key=value at seq. The overlay keeps key and value; the caller
// must not modify them afterwards.
func (o *Overlay) Set(key, value []byte, seq int64) {
	o.t.ReplaceOrInsert(staged{key: key, value: value, seq: seq})
}

// Delete stages a tombstone for key at seq.
func (o *Overlay) Delete(key []byte, seq int64) {
	o.t.ReplaceOrInsert(staged{key: key, deleted: true, seq: seq})
}

// Lookup returns the staged state of key: found is false when the overlay
// says nothing about key; deleted is true for a tombstone.
func (o *Overlay) Lookup(key []byte) (value []byte, deleted, found bool) {
	s, ok := o.t.Get(staged{key: key})
	if !ok {
		return nil, false, false
	}
	return s.value, s.deleted, true
}

// Len returns the number of staged keys.
func (o *Overlay) Len() int { return o.t.Len() }

// MaxSeq returns the highest staged sequence number (0 if empty).
func (o *Overlay) MaxSeq() int64 {
	var max int64
	o.t.Ascend(func(s staged) bool {
		max = maxInt64(max, s.seq)
		return true
	})
	return max
}

// Mutations returns the staged mutations in key order and the highest seq
// among them.
func (o *Overlay) Mutations() (muts []Mutation, maxSeq int64) {
	muts = make([]Mutation, 0, o.t.Len())
	o.t.Ascend(func(s staged) bool {
		muts = append(muts, Mutation{Key: s.key, Value: s.value, Delete: s.deleted})
		maxSeq = maxInt64(maxSeq, s.seq)
		return true
	})
	return muts, maxSeq
}

// Drop removes staged keys whose seq is <= maxSeq (those folded into a
// tree); keys restaged since stay.
func (o *Overlay) Drop(maxSeq int64) {
	var folded []staged
	o.t.Ascend(func(s staged) bool {
		if s.seq <= maxSeq {
			folded = append(folded, s)
		}
		return true
	})
	for _, s := range folded {
		o.t.Delete(s)
	}
}

// Clone returns an independent copy (copy-on-write, O(1)).
func (o *Overlay) Clone() *Overlay { return &Overlay{t: o.t.Clone()} }

// ascend calls fn for staged entries in [start, end) (nil end: no bound).
func (o *Overlay) ascend(start, end []byte, fn func(staged) bool) {
	if end == nil {
		o.t.AscendGreaterOrEqual(staged{key: start}, fn)
		return
	}
	o.t.AscendRange(staged{key: start}, staged{key: end}, fn)
}

func maxInt64(a, b int64) int64 {
	if a > b {
		return a
	}
	return b
}

// View is the merged state of a tree root and an overlay on top of it.
// A nil Overlay reads the tree alone.
type View struct {
	Store   *Store
	Root    cas.Hash
	Overlay *Overlay
}

// Get returns key's value, consulting the overlay first.
func (v View) Get(ctx context.Context, key []byte) ([]byte, bool, error) {
	if v.Overlay != nil {
		if val, deleted, found := v.Overlay.Lookup(key); found {
			return val, !deleted, nil
		}
	}
	return v.Store.Get(ctx, v.Root, key)
}

// Scan calls fn for each live key in [start, end) of the merged view, in
// ascending order. Returning Stop ends the scan with nil.
func (v View) Scan(ctx context.Context, start, end []byte, fn func(key, value []byte) error) error {
	stopped := false
	userFn := fn
	fn = func(key, value []byte) error {
		err := userFn(key, value)
		stopped = err == Stop
		return err
	}
	var pending []staged
	if v.Overlay != nil {
		v.Overlay.ascend(start, end, func(s staged) bool {
			pending = append(pending, s)
			return true
		})
	}
	// emitStaged passes staged entries with keys below limit (all when
	// limit is nil) and reports whether the overlay holds limit itself.
	emitStaged := func(limit []byte) (shadowed bool, err error) {
		for len(pending) > 0 {
			s := pending[0]
			c := -1
			if limit != nil {
				c = compare(s.key, limit)
			}
			if c > 0 {
				return false, nil
			}
			pending = pending[1:]
			if !s.deleted {
				if err := fn(s.key, s.value); err != nil {
					return c == 0, err
				}
			}
			if c == 0 {
				return true, nil
			}
		}
		return false, nil
	}
	err := v.Store.Scan(ctx, v.Root, start, end, func(key, value []byte) error {
		shadowed, err := emitStaged(key)
		if err != nil || shadowed {
			return err
		}
		return fn(key, value)
	})
	if err == nil && !stopped {
		_, err = emitStaged(nil)
	}
	if err == Stop {
		return nil
	}
	return err
}

// Diff calls fn for every key whose value differs between views v and w
// (both over v.Store), in ascending key order, without folding either
// overlay: the trees' diff (skipping shared subtrees) merged with the keys
// the overlays stage, each of which is looked up in both views. Work is
// proportional to the trees' difference plus the overlays' size, so two
// unfolded states forked from one root diff in time proportional to what
// they staged. Returning Stop ends the diff with nil.
func (v View) Diff(ctx context.Context, w View, fn func(Change) error) error {
	keys := stagedKeys(v.Overlay, w.Overlay)
	if len(keys) > 1 {
		// Each staged key is looked up in both trees: read their paths
		// a level at a time first.
		for _, x := range []View{v, w} {
			if err := x.Store.prefetch(ctx, x.Root, keys); err != nil {
				return err
			}
		}
	}
	stopped := false
	// emit reports key if its value differs between the views.
	emit := func(key []byte) error {
		old, inV, err := v.Get(ctx, key)
		if err != nil {
			return err
		}
		nu, inW, err := w.Get(ctx, key)
		if err != nil {
			return err
		}
		if inV == inW && string(old) == string(nu) {
			return nil
		}
		c := Change{Key: key}
		if inV {
			c.Old = present(old)
		}
		if inW {
			c.New = present(nu)
		}
		err = fn(c)
		stopped = err == Stop
		return err
	}
	// emitBelow reports the staged keys below limit and says whether the
	// overlays stage limit itself (it was reported then).
	emitBelow := func(limit []byte) (staged bool, err error) {
		for len(keys) > 0 && compare(keys[0], limit) <= 0 {
			k := keys[0]
			keys = keys[1:]
			if err := emit(k); err != nil {
				return false, err
			}
			if compare(k, limit) == 0 {
				return true, nil
			}
		}
		return false, nil
	}
	err := v.Store.Diff(ctx, v.Root, w.Root, func(c Change) error {
		staged, err := emitBelow(c.Key)
		if err != nil || staged {
			return err
		}
		err = fn(c)
		stopped = err == Stop
		return err
	})
	for err == nil && !stopped && len(keys) > 0 {
		k := keys[0]
		keys = keys[1:]
		err = emit(k)
	}
	if err == Stop {
		return nil
	}
	return err
}

// stagedKeys returns the keys either overlay stages, ascending, once each.
func stagedKeys(a, b *Overlay) [][]byte {
	ka, kb := a.keys(), b.keys()
	out := make([][]byte, 0, len(ka)+len(kb))
	for len(ka) > 0 || len(kb) > 0 {
		switch {
		case len(kb) == 0 || (len(ka) > 0 && compare(ka[0], kb[0]) < 0):
			out, ka = append(out, ka[0]), ka[1:]
		case len(ka) == 0 || compare(ka[0], kb[0]) > 0:
			out, kb = append(out, kb[0]), kb[1:]
		default:
			out, ka, kb = append(out, ka[0]), ka[1:], kb[1:]
		}
	}
	return out
}

// keys returns the staged keys in order (none for a nil overlay).
func (o *Overlay) keys() [][]byte {
	if o == nil {
		return nil
	}
	out := make([][]byte, 0, o.t.Len())
	o.t.Ascend(func(s staged) bool {
		out = append(out, s.key)
		return true
	})
	return out
}
