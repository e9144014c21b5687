package gc

import (
	"context"
	"fmt"
	"time"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/meta"
)

// snapshot is what one metadata snapshot holds for the collector.
type snapshot struct {
	// now is T0: the database clock read in a write transaction before
	// the snapshot, once every write in flight has ended
	// (meta.GCTx.CollectionClock), so writes the snapshot misses are
	// stamped later.
	now time.Time
	// owners are the workspaces with their roots.
	owners []owner
	// intents are the upload intents.
	intents []meta.Intent
	// nodes and bodies list the stored objects (when asked for).
	nodes, bodies []meta.ObjectInfo
}

// owner is one workspace and what it holds: its head, checkpoint and
// recorded states' roots and its staging rows.
type owner struct {
	id, name string
	roots    []cas.Hash
	staged   []meta.Staged
}

// readSnapshot reads the roots (and, with objects, the stored nodes and
// bodies) in one View, holding o.Lock meanwhile.
func readSnapshot(ctx context.Context, d Deps, o Options, objects bool) (*snapshot, error) {
	s := &snapshot{}
	err := d.Meta.Update(ctx, func(tx meta.Tx) error {
		var err error
		s.now, err = tx.CollectionClock()
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read database clock: %w", err)
	}
	if o.Lock != nil {
		o.Lock.Lock()
		defer o.Lock.Unlock()
	}
	err = d.Meta.View(ctx, func(tx meta.Tx) error {
		s.owners, s.intents, s.nodes, s.bodies = nil, nil, nil, nil
		ws, err := tx.Workspaces()
		if err != nil {
			return err
		}
		for _, w := range ws {
			ow := owner{id: w.ID, name: w.Name, roots: []cas.Hash{w.Root}}
			cps, err := tx.Checkpoints(w.ID)
			if err != nil {
				return err
			}
			if ow.staged, err = tx.Staged(w.ID); err != nil {
				return err
			}
			for _, c := range cps {
				ow.roots = append(ow.roots, c.Root)
				// A checkpoint's state includes the staging delta it was
				// taken with, until the delta is folded into its root.
				rows, err := tx.CheckpointStaged(c.ID)
				if err != nil {
					return err
				}
				ow.staged = append(ow.staged, rows...)
			}
			// The states audited calls left it in, while retained.
			roots, rows, err := tx.HistoryRefs(w.ID)
			if err != nil {
				return err
			}
			ow.roots, ow.staged = append(ow.roots, roots...), append(ow.staged, rows...)
			s.owners = append(s.owners, ow)
		}
		err = tx.Intents(func(in meta.Intent) error {
			s.intents = append(s.intents, in)
			return nil
		})
		if err != nil || !objects {
			return err
		}
		err = tx.Nodes(func(oi meta.ObjectInfo) error {
			s.nodes = append(s.nodes, oi)
			return nil
		})
		if err != nil {
			return err
		}
		return tx.InlineBodies(func(oi meta.ObjectInfo) error {
			s.bodies = append(s.bodies, oi)
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("read roots: %w", err)
	}
	return s, nil
}
