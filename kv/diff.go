package kv

import (
	"context"
	"fmt"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/errdefs"
)

// ref names a subtree by its largest key and hash; all refs in a sequence
// are at the same level.
type ref struct {
	last []byte
	h    cas.Hash
}

// Diff calls fn for every key whose value differs between the trees rooted
// at a and b, in ascending key order, skipping shared subtrees: work is
// proportional to the number of changes times the tree height.
func (s *Store) Diff(ctx context.Context, a, b cas.Hash, fn func(Change) error) error {
	if a == b {
		return nil
	}
	ra, la, err := s.rootSeq(ctx, a)
	if err != nil {
		return err
	}
	rb, lb, err := s.rootSeq(ctx, b)
	if err != nil {
		return err
	}
	err = s.diffSeq(ctx, ra, la, rb, lb, fn)
	if err == Stop {
		return nil
	}
	return err
}

// rootSeq returns the one-element sequence of a root and its level (an
// empty sequence for the empty tree).
func (s *Store) rootSeq(ctx context.Context, h cas.Hash) ([]ref, int, error) {
	if h.IsZero() {
		return nil, 0, nil
	}
	n, err := s.load(ctx, h)
	if err != nil {
		return nil, 0, err
	}
	return []ref{{last: n.lastKey(), h: h}}, n.level, nil
}

// diffSeq compares two ordered sequences of subtrees covering the same key
// range. Subtrees with equal hashes are skipped; since boundaries depend on
// keys alone, unchanged regions of two trees consist of identical nodes with
// identical largest keys, so the sequences re-align after every change.
func (s *Store) diffSeq(ctx context.Context, a []ref, la int, b []ref, lb int, fn func(Change) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var err error
	for la > lb && len(a) > 0 {
		if a, err = s.expand(ctx, a); err != nil {
			return err
		}
		la--
	}
	for lb > la && len(b) > 0 {
		if b, err = s.expand(ctx, b); err != nil {
			return err
		}
		lb--
	}
	level := max(la, lb)
	if len(a) == 0 || len(b) == 0 {
		return s.diffLeaves(ctx, a, b, fn) // one side is empty: walk the other to its leaves
	}
	var runA, runB []ref
	flush := func() error {
		if len(runA) == 0 && len(runB) == 0 {
			return nil
		}
		if level == 0 {
			// Only the leaves that differ are read: a changed node's
			// other children are skipped like any shared subtree.
			ra, rb := runA, runB
			runA, runB = nil, nil
			return s.diffLeaves(ctx, ra, rb, fn)
		}
		ea, err := s.expand(ctx, runA)
		if err != nil {
			return err
		}
		eb, err := s.expand(ctx, runB)
		if err != nil {
			return err
		}
		runA, runB = nil, nil
		return s.diffSeq(ctx, ea, level-1, eb, level-1, fn)
	}
	i, j := 0, 0
	for i < len(a) || j < len(b) {
		switch {
		case i < len(a) && j < len(b) && a[i].h == b[j].h:
			if err := flush(); err != nil {
				return err
			}
			i++
			j++
		case j == len(b) || (i < len(a) && compare(a[i].last, b[j].last) < 0):
			runA = append(runA, a[i])
			i++
		case i == len(a) || compare(b[j].last, a[i].last) < 0:
			runB = append(runB, b[j])
			j++
		default: // same largest key, different content
			runA = append(runA, a[i])
			runB = append(runB, b[j])
			i++
			j++
		}
	}
	return flush()
}

// expand replaces each internal subtree by its children, reading the
// subtrees' roots together (loadMany).
func (s *Store) expand(ctx context.Context, seq []ref) ([]ref, error) {
	nodes, err := s.loadMany(ctx, hashes(seq))
	if err != nil {
		return nil, err
	}
	var out []ref
	for _, n := range nodes {
		if n.leaf() {
			return seq, nil // already at the leaves
		}
		for i, k := range n.kids {
			out = append(out, ref{last: n.keys[i], h: k})
		}
	}
	return out, nil
}

func hashes(seq []ref) []cas.Hash {
	hs := make([]cas.Hash, len(seq))
	for i, r := range seq {
		hs[i] = r.h
	}
	return hs
}

// diffLeaves walks two sequences of subtrees down to their entries and
// merges them.
func (s *Store) diffLeaves(ctx context.Context, a, b []ref, fn func(Change) error) error {
	ea, err := s.entries(ctx, a)
	if err != nil {
		return err
	}
	eb, err := s.entries(ctx, b)
	if err != nil {
		return err
	}
	i, j := 0, 0
	for i < len(ea) || j < len(eb) {
		var c int
		switch {
		case i == len(ea):
			c = 1
		case j == len(eb):
			c = -1
		default:
			c = compare(ea[i].Key, eb[j].Key)
		}
		var ch Change
		switch {
		case c < 0:
			ch = Change{Key: ea[i].Key, Old: present(ea[i].Value)}
			i++
		case c > 0:
			ch = Change{Key: eb[j].Key, New: present(eb[j].Value)}
			j++
		default:
			ch = Change{Key: ea[i].Key, Old: present(ea[i].Value), New: present(eb[j].Value)}
			i++
			j++
			if string(ch.Old) == string(ch.New) {
				continue
			}
		}
		if err := fn(ch); err != nil {
			return err
		}
	}
	return nil
}

type entry struct{ Key, Value []byte }

// entries returns every entry beneath the subtrees of seq, in order,
// reading each level's nodes together.
func (s *Store) entries(ctx context.Context, seq []ref) ([]entry, error) {
	hs := hashes(seq)
	for len(hs) > 0 {
		nodes, err := s.loadMany(ctx, hs)
		if err != nil {
			return nil, err
		}
		for _, n := range nodes {
			if n.level != nodes[0].level {
				return nil, fmt.Errorf("diff: %w: sibling subtrees of levels %d and %d", errdefs.ErrCorrupt, nodes[0].level, n.level)
			}
		}
		if nodes[0].leaf() {
			var out []entry
			for _, n := range nodes {
				for i, k := range n.keys {
					out = append(out, entry{k, n.vals[i]})
				}
			}
			return out, nil
		}
		hs = hs[:0:0]
		for _, n := range nodes {
			hs = append(hs, n.kids...)
		}
	}
	return nil, nil
}

// present returns v, or an empty non-nil slice for an empty value, so that
// nil in a Change always means absent.
func present(v []byte) []byte {
	if v == nil {
		return []byte{}
	}
	return v
}
