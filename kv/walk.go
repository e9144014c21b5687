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
// together from a BatchSource. The callbacks run on the calling goroutine;
// while they visit one batch of a level's nodes, the next batch is read,
// verified and decoded on another. The zero root is the empty tree. An
// error from a callback ends the walk and is returned.
func (s *Store) Walk(ctx context.Context, root cas.Hash, fns WalkFuncs) error {
	if root.IsZero() {
		return nil
	}
	for level := []cas.Hash{root}; len(level) > 0; {
		var err error
		if level, err = s.walkLevel(ctx, level, &fns); err != nil {
			return err
		}
	}
	return nil
}

// fetched is a batch of nodes read for a walk: the hashes asked, and each
// one's node or why it could not be read (nothing if the walk was
// cancelled first).
type fetched struct {
	hs    []cas.Hash
	nodes []*node
	errs  []error
}

// walkLevel visits the nodes of one level in batches of batchNodes, each
// read (fetchAhead) while the callbacks visit the one before, and returns
// the next level: the children of the level's internal nodes.
func (s *Store) walkLevel(ctx context.Context, level []cas.Hash, fns *WalkFuncs) ([]cas.Hash, error) {
	var next []cas.Hash
	var inFlight <-chan fetched
	for start := 0; start < len(level) || inFlight != nil; start += batchNodes {
		var ahead <-chan fetched
		if start < len(level) {
			ahead = s.fetchAhead(ctx, enter(level[start:min(start+batchNodes, len(level))], fns))
		}
		if inFlight != nil {
			var err error
			if next, err = visitBatch(ctx, <-inFlight, fns, next); err != nil {
				if ahead != nil {
					<-ahead // the read outlives no walk
				}
				return nil, err
			}
		}
		inFlight = ahead
	}
	return next, nil
}

// enter returns the hashes of hs that fns.Enter lets the walk read.
func enter(hs []cas.Hash, fns *WalkFuncs) []cas.Hash {
	if fns.Enter == nil {
		return hs
	}
	return slices.DeleteFunc(slices.Clone(hs), func(h cas.Hash) bool { return !fns.Enter(h) })
}

// fetchAhead starts reading the nodes hs on another goroutine and returns
// the channel that will yield them; nil if hs is empty.
func (s *Store) fetchAhead(ctx context.Context, hs []cas.Hash) <-chan fetched {
	if len(hs) == 0 {
		return nil
	}
	done := make(chan fetched, 1)
	go func() {
		f := fetched{hs: hs}
		if ctx.Err() == nil {
			f.nodes, f.errs = s.fetchMany(ctx, hs)
		}
		done <- f
	}()
	return done
}

// visitBatch calls the callbacks for the nodes of f and appends their
// children to next.
func visitBatch(ctx context.Context, f fetched, fns *WalkFuncs, next []cas.Hash) ([]cas.Hash, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for i, n := range f.nodes {
		if err := f.errs[i]; err != nil {
			if fns.Failed == nil || ctx.Err() != nil {
				return nil, err
			}
			if err := fns.Failed(f.hs[i], err); err != nil {
				return nil, err
			}
			continue
		}
		if fns.Node != nil {
			if err := fns.Node(f.hs[i], n.size); err != nil {
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
