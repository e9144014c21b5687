package gc

import (
	"context"
	"fmt"

	"github.com/forkspace/forkspace/blob"
	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/kv"
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

// objectKey names an object: a blob chunk and an inline body may hold the
// same bytes.
type objectKey struct {
	kind kind
	hash cas.Hash
}

// object is an object's ownership state and size.
type object struct {
	owner int
	size  int64
}

// ComputeUsage attributes every reachable object to the workspaces that
// reach it. A subtree is entered at most three times in all (unseen, one
// owner, several) to find owners, then once per workspace that reaches it
// to total its exclusive and shared bytes.
func ComputeUsage(ctx context.Context, d Deps, o Options) (*Usage, error) {
	o = o.withDefaults()
	s, err := readSnapshot(ctx, d, o, true)
	if err != nil {
		return nil, fmt.Errorf("compute usage: %w", err)
	}
	objs := map[objectKey]*object{}
	get := func(k kind, h cas.Hash) *object {
		ob := objs[objectKey{k, h}]
		if ob == nil {
			ob = &object{}
			objs[objectKey{k, h}] = ob
		}
		return ob
	}
	for i := range s.owners {
		o.progress("attribute", int64(i), int64(len(s.owners)))
		me := i + 1
		ref := func(key, value []byte) error {
			return contentRefs(key, value, func(k kind, h cas.Hash, size int64) {
				ob := get(k, h)
				ob.owner, _ = join(ob.owner, me)
				ob.size = size
			})
		}
		fns := kv.WalkFuncs{
			Enter: func(h cas.Hash) bool {
				ob := get(kindNode, h)
				var changed bool
				ob.owner, changed = join(ob.owner, me)
				return changed
			},
			Node: func(h cas.Hash, size int) error { get(kindNode, h).size = int64(size); return nil },
			Leaf: ref,
		}
		if err := s.owners[i].walk(ctx, d.KV, fns, ref); err != nil {
			return nil, fmt.Errorf("compute usage: %w", err)
		}
	}
	u := &Usage{}
	for key, ob := range objs {
		u.Reachable.add(key.kind, ob.size)
	}
	for i, w := range s.owners {
		o.progress("total", int64(i), int64(len(s.owners)))
		wu := WorkspaceUsage{ID: w.id, Name: w.name}
		me := i + 1
		seen := map[objectKey]bool{}
		visit := func(k kind, h cas.Hash) bool {
			key := objectKey{k, h}
			if seen[key] {
				return false
			}
			seen[key] = true
			ob := objs[key]
			if ob.owner == me {
				wu.Exclusive.add(k, ob.size)
			} else {
				wu.Shared.add(k, ob.size)
			}
			return true
		}
		ref := func(key, value []byte) error {
			return contentRefs(key, value, func(k kind, h cas.Hash, _ int64) { visit(k, h) })
		}
		enter := func(h cas.Hash) bool { return visit(kindNode, h) }
		if err := w.walk(ctx, d.KV, kv.WalkFuncs{Enter: enter, Leaf: ref}, ref); err != nil {
			return nil, fmt.Errorf("compute usage: %w", err)
		}
		u.Workspaces = append(u.Workspaces, wu)
	}
	for _, oi := range s.nodes {
		u.Stored.add(kindNode, oi.Size)
	}
	for _, oi := range s.bodies {
		u.Stored.add(kindBody, oi.Size)
	}
	err = d.Blobs.List(ctx, func(bi blob.Info) error {
		u.Stored.add(kindBlob, bi.Size)
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
