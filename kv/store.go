package kv

import (
	"context"
	"fmt"
	"io/fs"
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
	return verifyDecode(h, b)
}

// loadMany returns the decoded nodes hs, in order, like load: cached
// nodes from the cache, the others read together (fetchMany).
func (s *Store) loadMany(ctx context.Context, hs []cas.Hash) ([]*node, error) {
	out := make([]*node, len(hs))
	var miss []cas.Hash
	for i, h := range hs {
		if out[i] = s.cache.get(h); out[i] == nil {
			miss = append(miss, h)
		}
	}
	if len(miss) == 0 {
		return out, nil
	}
	got, errs := s.fetchMany(ctx, miss)
	j := 0
	for i := range out {
		if out[i] != nil {
			continue
		}
		if errs[j] != nil {
			return nil, errs[j]
		}
		out[i] = got[j]
		s.cache.add(hs[i], got[j])
		j++
	}
	return out, nil
}

// prefetch loads into the cache the nodes on the paths to keys in the tree
// rooted at root, each level's together (loadMany), so that the Gets of
// those keys that follow read no node one by one.
func (s *Store) prefetch(ctx context.Context, root cas.Hash, keys [][]byte) error {
	if root.IsZero() || len(keys) == 0 {
		return nil
	}
	at := make([]cas.Hash, len(keys)) // the node each key's path has reached
	for i := range at {
		at[i] = root
	}
	for len(keys) > 0 {
		var level []cas.Hash
		index := map[cas.Hash]int{}
		for _, h := range at {
			if _, ok := index[h]; !ok {
				index[h] = len(level)
				level = append(level, h)
			}
		}
		nodes, err := s.loadMany(ctx, level)
		if err != nil {
			return err
		}
		var nk [][]byte
		var nat []cas.Hash
		for i, k := range keys {
			n := nodes[index[at[i]]]
			if n.leaf() {
				continue
			}
			if c := n.child(k); c < len(n.kids) {
				nk, nat = append(nk, k), append(nat, n.kids[c])
			}
		}
		keys, at = nk, nat
	}
	return nil
}

// fetchMany reads and verifies the nodes hs like fetch, bypassing the
// cache, in requests of up to batchNodes from a BatchSource (one by one
// from another source). It returns each node or why it could not be read.
func (s *Store) fetchMany(ctx context.Context, hs []cas.Hash) ([]*node, []error) {
	nodes, errs := make([]*node, len(hs)), make([]error, len(hs))
	bs, ok := s.src.(BatchSource)
	if !ok || len(hs) == 1 {
		for i, h := range hs {
			nodes[i], errs[i] = s.fetch(ctx, h)
		}
		return nodes, errs
	}
	at := make(map[cas.Hash][]int, len(hs))
	for i, h := range hs {
		at[h] = append(at[h], i)
	}
	for start := 0; start < len(hs); start += batchNodes {
		batch := hs[start:min(start+batchNodes, len(hs))]
		err := bs.GetNodes(ctx, batch, func(h cas.Hash, b []byte) error {
			n, err := verifyDecode(h, b)
			for _, i := range at[h] {
				nodes[i], errs[i] = n, err
			}
			return nil
		})
		for i := start; i < start+len(batch); i++ {
			switch {
			case err != nil:
				errs[i] = fmt.Errorf("load node %s: %w", hs[i].Short(), err)
			case nodes[i] == nil && errs[i] == nil:
				errs[i] = fmt.Errorf("load node %s: %w", hs[i].Short(), fs.ErrNotExist)
			}
		}
	}
	return nodes, errs
}

// batchNodes is how many nodes fetchMany asks a BatchSource for at once.
const batchNodes = 64

// verifyDecode checks that b hashes to h and decodes it.
func verifyDecode(h cas.Hash, b []byte) (*node, error) {
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
