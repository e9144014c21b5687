package kv

import (
	"context"
	"fmt"
	"sort"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/errdefs"
)

const defaultCacheBytes = 64 << 20

// Store reads and builds trees over a NodeSource, caching decoded nodes.
// Safe for concurrent use. The zero root (cas.Hash{}) is the empty tree.
type Store struct {
	src   NodeSource
	seed  uint64
	cache *nodeCache
}

// New returns a Store reading nodes from src.
func New(src NodeSource, opts Options) *Store {
	if opts.CacheBytes <= 0 {
		opts.CacheBytes = defaultCacheBytes
	}
	return &Store{src: src, seed: opts.Seed, cache: newNodeCache(opts.CacheBytes)}
}

// load returns the decoded node h, verifying that its bytes hash to h.
func (s *Store) load(ctx context.Context, h cas.Hash) (*node, error) {
	if n := s.cache.get(h); n != nil {
		return n, nil
	}
	n, err := s.fetch(ctx, h)
	if err != nil {
		return nil, err
	}
	s.cache.add(h, n)
	return n, nil
}

// fetch reads node h from the source, bypassing the cache, and verifies it.
func (s *Store) fetch(ctx context.Context, h cas.Hash) (*node, error) {
	b, err := s.src.GetNode(ctx, h)
	if err != nil {
		return nil, fmt.Errorf("load node %s: %w", h.Short(), err)
	}
	if !cas.Verify(h, b) {
		return nil, fmt.Errorf("load node %s: %w: content does not match its hash", h.Short(), errdefs.ErrCorrupt)
	}
	n, err := decodeNode(b)
	if err != nil {
		return nil, fmt.Errorf("load node %s: %w", h.Short(), err)
	}
	return n, nil
}

// child returns the index of the child of internal node n that covers key:
// the first whose largest key is >= key, or len(n.keys) if key is beyond
// every key in n.
func (n *node) child(key []byte) int {
	return sort.Search(len(n.keys), func(i int) bool { return compare(n.keys[i], key) >= 0 })
}

// Get returns the value of key in the tree rooted at root. The returned
// slice must not be modified.
func (s *Store) Get(ctx context.Context, root cas.Hash, key []byte) ([]byte, bool, error) {
	if root.IsZero() {
		return nil, false, nil
	}
	h := root
	for {
		n, err := s.load(ctx, h)
		if err != nil {
			return nil, false, err
		}
		i := n.child(key)
		if i == len(n.keys) {
			return nil, false, nil
		}
		if n.leaf() {
			if compare(n.keys[i], key) != 0 {
				return nil, false, nil
			}
			return n.vals[i], true, nil
		}
		h = n.kids[i]
	}
}

// Scan calls fn for each key in [start, end) in ascending order (a nil end
// means no upper bound). Returning Stop from fn ends the scan with nil.
func (s *Store) Scan(ctx context.Context, root cas.Hash, start, end []byte, fn func(key, value []byte) error) error {
	if root.IsZero() {
		return nil
	}
	err := s.scan(ctx, root, start, end, fn)
	if err == Stop {
		return nil
	}
	return err
}

func (s *Store) scan(ctx context.Context, h cas.Hash, start, end []byte, fn func(key, value []byte) error) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	n, err := s.load(ctx, h)
	if err != nil {
		return err
	}
	for i := n.child(start); i < len(n.keys); i++ {
		if n.leaf() {
			if end != nil && compare(n.keys[i], end) >= 0 {
				return Stop
			}
			if err := fn(n.keys[i], n.vals[i]); err != nil {
				return err
			}
			continue
		}
		if err := s.scan(ctx, n.kids[i], start, end, fn); err != nil {
			return err
		}
		if end != nil && compare(n.keys[i], end) >= 0 {
			return Stop
		}
	}
	return nil
}
