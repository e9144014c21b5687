package gc

import (
	"context"
	"fmt"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/kv"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/vfs"
)

// marker marks what roots reach: nodes with their sizes, and the inline
// bodies and blob chunks that content manifests name, with theirs.
// Subtrees already marked are not walked again.
type marker struct {
	kv     *kv.Store
	nodes  map[cas.Hash]int64
	bodies map[cas.Hash]int64
	chunks chunkSet // sealed once every root is marked (owners)
	// failed receives unreadable nodes and undecodable manifests; nil
	// makes them end the walk.
	failed func(kind string, h cas.Hash, err error) error
	// files, when set (checks), remembers which files reference what.
	files *fileIndex
}

func newMarker(k *kv.Store) *marker {
	return &marker{kv: k, nodes: map[cas.Hash]int64{}, bodies: map[cas.Hash]int64{}}
}

// tree marks the tree rooted at root.
func (m *marker) tree(ctx context.Context, root cas.Hash) error {
	fns := kv.WalkFuncs{
		Enter: func(h cas.Hash) bool {
			if _, ok := m.nodes[h]; ok {
				return false
			}
			m.nodes[h] = 0
			return true
		},
		Node: func(h cas.Hash, size int) error {
			m.nodes[h] = int64(size)
			return nil
		},
		Leaf: func(key, value []byte) error { return m.entry(key, value) },
	}
	if m.failed != nil {
		fns.Failed = func(h cas.Hash, err error) error { return m.failed("node", h, err) }
	}
	return m.kv.Walk(ctx, root, fns)
}

// staged marks what staging rows reference.
func (m *marker) staged(rows []meta.Staged) error {
	for _, r := range rows {
		if r.Deleted {
			continue
		}
		if err := m.entry(r.Key, r.Value); err != nil {
			return err
		}
	}
	return nil
}

// entry marks the body or chunks a key/value references.
func (m *marker) entry(key, value []byte) error {
	if m.files != nil {
		m.files.entry(key, value)
	}
	err := contentRefs(key, value, func(k kind, h cas.Hash, size int64) {
		if m.files != nil {
			m.files.ref(key, h)
		}
		if k == kindBody {
			m.bodies[h] = size
		} else {
			m.chunks.add(h, size)
		}
	})
	if err != nil && m.failed != nil {
		return m.failed("manifest", cas.Sum(value), err)
	}
	return err
}

// contentRefs calls fn for the inline body or each blob chunk a key/value
// of a workspace's key space references (see vfs.ContentRefs).
func contentRefs(key, value []byte, fn func(k kind, h cas.Hash, size int64)) error {
	man, ok, err := vfs.ContentRefs(key, value)
	if err != nil {
		return fmt.Errorf("read manifest: %w", err)
	}
	if !ok {
		return nil
	}
	for _, e := range man.Extents {
		switch {
		case e.Hash.IsZero():
		case man.Inline:
			fn(kindBody, e.Hash, e.Size)
		default:
			fn(kindBlob, e.Hash, e.Size)
		}
	}
	return nil
}

// owners marks every root of the snapshot and seals the chunk set.
func (m *marker) owners(ctx context.Context, s *snapshot, o Options) error {
	for i, ow := range s.owners {
		o.progress("mark", int64(i), int64(len(s.owners)))
		if m.files != nil {
			m.files.owner = ow.name
		}
		for _, r := range ow.roots {
			if err := m.tree(ctx, r); err != nil {
				return fmt.Errorf("mark workspace %s: %w", ow.name, err)
			}
		}
		if err := m.staged(ow.staged); err != nil {
			return fmt.Errorf("mark workspace %s: %w", ow.name, err)
		}
	}
	m.chunks.seal()
	o.progress("mark", int64(len(s.owners)), int64(len(s.owners)))
	return nil
}

// counts tallies the marked objects.
func (m *marker) counts() Counts {
	var c Counts
	for _, t := range []struct {
		k    kind
		objs map[cas.Hash]int64
	}{{kindNode, m.nodes}, {kindBody, m.bodies}} {
		for _, size := range t.objs {
			c.add(t.k, size)
		}
	}
	for _, r := range m.chunks.refs {
		c.add(kindBlob, r.size)
	}
	return c
}
