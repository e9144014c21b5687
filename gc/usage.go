package gc

import (
	"context"
	"fmt"

	"github.com/forkspace/forkspace/blob"
	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/kv"
	"github.com/forkspace/forkspace/vfs"
)

// Usage is the space accounting of a store.
type Usage struct {
	// Stored counts every object stored; Reachable those some root
	// reaches. The difference is garbage (collected or still in grace).
	Stored    Counts `json:"stored"`
	Reachable Counts `json:"reachable"`
	// Workspaces attributes the reachable objects, in catalog order.
	Workspaces []WorkspaceUsage `json:"workspaces"`
}

// WorkspaceUsage is one workspace's share of the stored objects; its head,
// checkpoints and staging rows count as the workspace.
type WorkspaceUsage struct {
	ID   string `json:"id"`
	Name string `json:"name"`
	// Exclusive counts what only this workspace reaches: what deleting it
	// would free.
	Exclusive Counts `json:"exclusive"`
	// Shared counts what it reaches that other workspaces reach too.
	Shared Counts `json:"shared"`
}

// ownership states of an object: 0 unseen, i+1 reached by owner i only,
// multi reached by several.
const multi = -1

// owners records, per object, which workspace reaches it.
type owners struct {
	nodes, bodies, chunks map[cas.Hash]int
	sizes                 map[cas.Hash]int64 // node sizes
}

// join records that owner me reaches an object whose state was st and
// reports the new state and whether it changed.
func join(st, me int) (int, bool) {
	switch st {
	case 0:
		return me, true
	case me, multi:
		return st, false
	}
	return multi, true
}

// ComputeUsage attributes every reachable object to the workspaces that
// reach it. A subtree is walked at most three times in all (unseen, one
// owner, several) to find owners, then once per workspace that reaches it
// to total shared bytes.
func ComputeUsage(ctx context.Context, d Deps, o Options) (*Usage, error) {
	o = o.withDefaults()
	s, err := readSnapshot(ctx, d, o, true)
	if err != nil {
		return nil, fmt.Errorf("compute usage: %w", err)
	}
	ow := &owners{nodes: map[cas.Hash]int{}, bodies: map[cas.Hash]int{}, chunks: map[cas.Hash]int{}, sizes: map[cas.Hash]int64{}}
	chunkSizes, bodySizes := map[cas.Hash]int64{}, map[cas.Hash]int64{}
	for i := range s.owners {
		o.progress("attribute", int64(i), int64(len(s.owners)))
		me := i + 1
		ref := func(key, value []byte) error {
			m, ok, err := vfs.ContentRefs(key, value)
			if err != nil || !ok {
				return err
			}
			for _, e := range m.Extents {
				switch {
				case e.Hash.IsZero():
				case m.Inline:
					ow.bodies[e.Hash], _ = join(ow.bodies[e.Hash], me)
					bodySizes[e.Hash] = e.Size
				default:
					ow.chunks[e.Hash], _ = join(ow.chunks[e.Hash], me)
					chunkSizes[e.Hash] = e.Size
				}
			}
			return nil
		}
		fns := kv.WalkFuncs{
			Enter: func(h cas.Hash) bool {
				st, changed := join(ow.nodes[h], me)
				ow.nodes[h] = st
				return changed
			},
			Node: func(h cas.Hash, size int) error { ow.sizes[h] = int64(size); return nil },
			Leaf: ref,
		}
		if err := s.owners[i].walk(ctx, d.KV, fns, ref); err != nil {
			return nil, fmt.Errorf("compute usage: %w", err)
		}
	}
	u := &Usage{}
	for i, w := range s.owners {
		o.progress("total", int64(i), int64(len(s.owners)))
		wu := WorkspaceUsage{ID: w.id, Name: w.name}
		me := i + 1
		seen := map[cas.Hash]bool{}
		add := func(st int, excl, shared *int64, exclB, sharedB *int64, size int64) {
			if st == me {
				*excl++
				*exclB += size
			} else {
				*shared++
				*sharedB += size
			}
		}
		ref := func(key, value []byte) error {
			m, ok, err := vfs.ContentRefs(key, value)
			if err != nil || !ok {
				return err
			}
			for _, e := range m.Extents {
				if e.Hash.IsZero() || seen[e.Hash] {
					continue
				}
				seen[e.Hash] = true
				if m.Inline {
					add(ow.bodies[e.Hash], &wu.Exclusive.Bodies, &wu.Shared.Bodies, &wu.Exclusive.BodyBytes, &wu.Shared.BodyBytes, e.Size)
				} else {
					add(ow.chunks[e.Hash], &wu.Exclusive.Blobs, &wu.Shared.Blobs, &wu.Exclusive.BlobBytes, &wu.Shared.BlobBytes, e.Size)
				}
			}
			return nil
		}
		fns := kv.WalkFuncs{
			Enter: func(h cas.Hash) bool {
				if seen[h] {
					return false
				}
				seen[h] = true
				add(ow.nodes[h], &wu.Exclusive.Nodes, &wu.Shared.Nodes, &wu.Exclusive.NodeBytes, &wu.Shared.NodeBytes, ow.sizes[h])
				return true
			},
			Leaf: ref,
		}
		if err := w.walk(ctx, d.KV, fns, ref); err != nil {
			return nil, fmt.Errorf("compute usage: %w", err)
		}
		u.Workspaces = append(u.Workspaces, wu)
	}
	for h := range ow.nodes {
		u.Reachable.Nodes++
		u.Reachable.NodeBytes += ow.sizes[h]
	}
	for h := range ow.bodies {
		u.Reachable.Bodies++
		u.Reachable.BodyBytes += bodySizes[h]
	}
	for h := range ow.chunks {
		u.Reachable.Blobs++
		u.Reachable.BlobBytes += chunkSizes[h]
	}
	for _, oi := range s.nodes {
		u.Stored.Nodes++
		u.Stored.NodeBytes += oi.Size
	}
	for _, oi := range s.bodies {
		u.Stored.Bodies++
		u.Stored.BodyBytes += oi.Size
	}
	err = d.Blobs.List(ctx, func(bi blob.Info) error {
		u.Stored.Blobs++
		u.Stored.BlobBytes += bi.Size
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("compute usage: %w", err)
	}
	return u, nil
}

// walk walks the owner's trees with fns and its staging rows with ref.
func (w *owner) walk(ctx context.Context, k *kv.Store, fns kv.WalkFuncs, ref func(key, value []byte) error) error {
	for _, r := range w.roots {
		if err := k.Walk(ctx, r, fns); err != nil {
			return fmt.Errorf("workspace %s: %w", w.name, err)
		}
	}
	for _, r := range w.staged {
		if r.Deleted {
			continue
		}
		if err := ref(r.Key, r.Value); err != nil {
			return fmt.Errorf("workspace %s: %w", w.name, err)
		}
	}
	return nil
}
