package kv

import (
	"context"

	"github.com/forkspace/forkspace/cas"
)

// Store reads and builds trees over a NodeSource, caching decoded nodes.
// Safe for concurrent use. The zero root (cas.Hash{}) is the empty tree.
type Store struct{}

// New returns a Store reading nodes from src.
func New(src NodeSource, opts Options) *Store { panic("unimplemented") }

// Get returns the value of key in the tree rooted at root. The returned
// slice must not be modified.
func (s *Store) Get(ctx context.Context, root cas.Hash, key []byte) ([]byte, bool, error) {
	panic("unimplemented")
}

// Scan calls fn for each key in [start, end) in ascending order (a nil end
// means no upper bound). Returning Stop from fn ends the scan with nil.
func (s *Store) Scan(ctx context.Context, root cas.Hash, start, end []byte, fn func(key, value []byte) error) error {
	panic("unimplemented")
}

// Apply returns the root of the tree that results from applying muts
// (sorted or not; the last mutation of a key wins) to root, and the nodes
// that did not exist before, which the caller must persist before
// publishing the new root. The result depends only on the resulting set of
// keys and values (history independence). Work is proportional to
// len(muts) times the tree height, not to the size of the tree.
func (s *Store) Apply(ctx context.Context, root cas.Hash, muts []Mutation) (cas.Hash, []Node, error) {
	panic("unimplemented")
}

// Diff calls fn for every key whose value differs between the trees rooted
// at a and b, in ascending key order, skipping shared subtrees: work is
// proportional to the number of changes times the tree height.
func (s *Store) Diff(ctx context.Context, a, b cas.Hash, fn func(Change) error) error {
	panic("unimplemented")
}
