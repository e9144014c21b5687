package kv

import (
	"context"
	"fmt"
	"io/fs"
	"slices"

	"github.com/forkspace/forkspace/cas"
)

// Apply returns the root of the tree that results from applying muts
// (sorted or not; the last mutation of a key wins) to root, and the nodes
// that did not exist before, which the caller must persist before
// publishing the new root. The result depends only on the resulting set of
// keys and values (history independence). Work is proportional to
// len(muts) times the tree height, not to the size of the tree.
func (s *Store) Apply(ctx context.Context, root cas.Hash, muts []Mutation) (cas.Hash, []Node, error) {
	muts, err := normalize(muts)
	if err != nil {
		return cas.Hash{}, nil, err
	}
	if len(muts) == 0 {
		return root, nil, nil
	}
	b := &builder{s: s, created: make(map[cas.Hash]bool)}
	if root.IsZero() {
		for _, m := range muts {
			if !m.Delete {
				b.add(0, m.Key, m.Value, cas.Hash{})
			}
		}
	} else if err := b.visit(ctx, root, muts); err != nil {
		return cas.Hash{}, nil, err
	}
	return b.finish(), b.nodes, nil
}

// normalize validates muts and returns them sorted by key with only the
// last mutation of each key kept.
func normalize(muts []Mutation) ([]Mutation, error) {
	for _, m := range muts {
		if len(m.Key) == 0 || len(m.Key) > maxKeyLen {
			return nil, fmt.Errorf("apply: %w: key length %d outside 1..%d", fs.ErrInvalid, len(m.Key), maxKeyLen)
		}
		if len(m.Value) > maxValueLen {
			return nil, fmt.Errorf("apply: %w: value of %d bytes exceeds %d", fs.ErrInvalid, len(m.Value), maxValueLen)
		}
	}
	out := make([]Mutation, len(muts))
	for i, m := range muts {
		// Nodes keep these bytes, so they must not alias the caller's buffers.
		out[i] = Mutation{Key: slices.Clone(m.Key), Value: slices.Clone(m.Value), Delete: m.Delete}
	}
	slices.SortStableFunc(out, func(a, b Mutation) int { return compare(a.Key, b.Key) })
	w := 0
	for i := range out {
		if i+1 < len(out) && compare(out[i].Key, out[i+1].Key) == 0 {
			continue // a later mutation of the same key wins
		}
		out[w] = out[i]
		w++
	}
	return out[:w], nil
}

// builder assembles a tree bottom-up from items fed in key order. levels[L]
// buffers the items of the node being built at level L; an item whose key
// ranks above L closes that node, whose (largest key, hash) becomes an item
// of level L+1. An existing node can be reused whole when the buffers below
// it are empty and it ends on a boundary: built from scratch, the same items
// would close the same node.
type builder struct {
	s       *Store
	levels  []*node
	nodes   []Node
	created map[cas.Hash]bool
}

// add appends an item to level L: a key/value at level 0, a (largest key,
// child hash) above.
func (b *builder) add(level int, key, val []byte, kid cas.Hash) {
	for len(b.levels) <= level {
		b.levels = append(b.levels, &node{level: len(b.levels)})
	}
	n := b.levels[level]
	n.keys = append(n.keys, key)
	if level == 0 {
		n.vals = append(n.vals, val)
	} else {
		n.kids = append(n.kids, kid)
	}
	if rank(b.s.seed, key) > level {
		b.close(level)
	}
}

// close turns the buffer of level L into a node and feeds it to level L+1.
func (b *builder) close(level int) {
	n := b.levels[level]
	last := n.lastKey()
	h := b.emit(n)
	b.levels[level] = &node{level: level}
	b.add(level+1, last, nil, h)
}

func (b *builder) emit(n *node) cas.Hash {
	data := n.encode()
	n.size = len(data)
	held := 0
	for i, k := range n.keys {
		held += len(k)
		if n.leaf() {
			held += len(n.vals[i])
		}
	}
	n.mem = n.footprint(held)
	h := cas.Sum(data)
	if !b.created[h] {
		b.created[h] = true
		b.nodes = append(b.nodes, Node{Hash: h, Data: data})
		b.s.cache.add(h, n)
	}
	return h
}

// emptyThrough reports whether the buffers of levels 0..level are empty.
func (b *builder) emptyThrough(level int) bool {
	for l := 0; l <= level && l < len(b.levels); l++ {
		if len(b.levels[l].keys) > 0 {
			return false
		}
	}
	return true
}

// finish closes the remaining buffers bottom-up and returns the root: the
// single item left at the top, never a node with one child.
func (b *builder) finish() cas.Hash {
	for l := 0; l < len(b.levels); l++ {
		n := b.levels[l]
		if len(n.keys) == 0 {
			continue
		}
		if l > 0 && len(n.keys) == 1 && b.emptyAbove(l) {
			return n.kids[0]
		}
		b.close(l)
	}
	return cas.Hash{}
}

func (b *builder) emptyAbove(level int) bool {
	for l := level + 1; l < len(b.levels); l++ {
		if len(b.levels[l].keys) > 0 {
			return false
		}
	}
	return true
}

// visit feeds the items of the subtree h, with muts applied, to the builder,
// reusing untouched subtrees whole where their boundaries allow.
func (b *builder) visit(ctx context.Context, h cas.Hash, muts []Mutation) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	n, err := b.s.load(ctx, h)
	if err != nil {
		return err
	}
	if n.leaf() {
		b.mergeLeaf(n, muts)
		return nil
	}
	j := 0
	for i, kid := range n.kids {
		end := len(muts)
		if i < len(n.kids)-1 {
			end = j
			for end < len(muts) && compare(muts[end].Key, n.keys[i]) <= 0 {
				end++
			}
		}
		// The parent's item key is the child's largest key, so whether the
		// child ends on a boundary is known without loading it.
		if end == j && b.emptyThrough(n.level-1) && rank(b.s.seed, n.keys[i]) > n.level-1 {
			b.add(n.level, n.keys[i], nil, kid)
		} else if err := b.visit(ctx, kid, muts[j:end]); err != nil {
			return err
		}
		j = end
	}
	return nil
}

// mergeLeaf feeds the leaf's entries merged with muts (both sorted).
func (b *builder) mergeLeaf(n *node, muts []Mutation) {
	i, j := 0, 0
	for i < len(n.keys) || j < len(muts) {
		var c int
		switch {
		case i == len(n.keys):
			c = 1
		case j == len(muts):
			c = -1
		default:
			c = compare(n.keys[i], muts[j].Key)
		}
		switch {
		case c < 0:
			b.add(0, n.keys[i], n.vals[i], cas.Hash{})
			i++
		default:
			if m := muts[j]; !m.Delete {
				b.add(0, m.Key, m.Value, cas.Hash{})
			}
			if c == 0 {
				i++
			}
			j++
		}
	}
}
