package kv

import (
	"context"
	"slices"

	"github.com/forkspace/forkspace/cas"
)

// WalkFuncs are the callbacks of Walk. Nil callbacks are skipped, except
// Failed (see there).
type WalkFuncs struct {
	// Enter is called with each node's hash before it is read; returning
	// false skips the node and its whole subtree (the caller has visited
	// it already: subtrees shared by many roots are walked once).
	Enter func(h cas.Hash) bool
	// Node is called for each node read and verified, with its encoded
	// size in bytes.
	Node func(h cas.Hash, size int) error
	// Leaf is called for each entry of each leaf read, in key order within
	// the leaf. key and value must not be modified or retained.
	Leaf func(key, value []byte) error
	// Failed is called when a node cannot be read (fs.ErrNotExist) or does
	// not match its hash or decode (errdefs.ErrCorrupt). Returning nil
	// skips its subtree and continues; a nil Failed ends the walk with the
	// error.
	Failed func(h cas.Hash, err error) error
}

// Walk visits every node of the tree rooted at root, level by level from
// the root, reading nodes straight from the source (verified, not cached: a
// walk over many trees would only flush the cache), a level's siblings
// together from a BatchSource. The zero root is the empty tree. An error
// from a callback ends the walk and is returned.
func (s *Store) Walk(ctx context.Context, root cas.Hash, fns WalkFuncs) error {
	if root.IsZero() {
		return nil
	}
	for level := []cas.Hash{root}; len(level) > 0; {
		var next []cas.Hash
		for start := 0; start < len(level); start += batchNodes {
			var err error
			if next, err = s.walkBatch(ctx, level[start:min(start+batchNodes, len(level))], &fns, next); err != nil {
				return err
			}
		}
		level = next
	}
	return nil
}

// walkBatch visits the nodes hs (of one level) and appends their children
// to next.
func (s *Store) walkBatch(ctx context.Context, hs []cas.Hash, fns *WalkFuncs, next []cas.Hash) ([]cas.Hash, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if fns.Enter != nil {
		hs = slices.DeleteFunc(slices.Clone(hs), func(h cas.Hash) bool { return !fns.Enter(h) })
		if len(hs) == 0 {
			return next, nil
		}
	}
	nodes, errs := s.fetchMany(ctx, hs)
	for i, n := range nodes {
		if err := errs[i]; err != nil {
			if fns.Failed == nil || ctx.Err() != nil {
				return nil, err
			}
			if err := fns.Failed(hs[i], err); err != nil {
				return nil, err
			}
			continue
		}
		if fns.Node != nil {
			if err := fns.Node(hs[i], n.size); err != nil {
				return nil, err
			}
		}
		if !n.leaf() {
			next = append(next, n.kids...)
			continue
		}
		if fns.Leaf == nil {
			continue
		}
		for j, k := range n.keys {
			if err := fns.Leaf(k, n.vals[j]); err != nil {
				return nil, err
			}
		}
	}
	return next, nil
}
