package kv

import (
	"context"

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

// Walk visits every node of the tree rooted at root, depth first, reading
// nodes straight from the source (verified, not cached: a walk over many
// trees would only flush the cache). The zero root is the empty tree. An
// error from a callback ends the walk and is returned.
func (s *Store) Walk(ctx context.Context, root cas.Hash, fns WalkFuncs) error {
	if root.IsZero() {
		return nil
	}
	return s.walk(ctx, root, &fns)
}

func (s *Store) walk(ctx context.Context, h cas.Hash, fns *WalkFuncs) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if fns.Enter != nil && !fns.Enter(h) {
		return nil
	}
	n, err := s.fetch(ctx, h)
	if err != nil {
		if fns.Failed == nil || ctx.Err() != nil {
			return err
		}
		return fns.Failed(h, err)
	}
	if fns.Node != nil {
		if err := fns.Node(h, n.size); err != nil {
			return err
		}
	}
	if n.leaf() {
		if fns.Leaf == nil {
			return nil
		}
		for i, k := range n.keys {
			if err := fns.Leaf(k, n.vals[i]); err != nil {
				return err
			}
		}
		return nil
	}
	for _, kid := range n.kids {
		if err := s.walk(ctx, kid, fns); err != nil {
			return err
		}
	}
	return nil
}
