package forkspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/forkspace/forkspace/meta"
)

// ErrNoMergeBase is returned (wrapped, naming the two sides) when no
// common state of two workspaces is recorded: they have no common
// ancestor, or a fork on the way was made before forks recorded their
// base (store format before migration 0007). errors.Is(err,
// fs.ErrNotExist) holds too. Name a base state explicitly
// (MergeOptions.Base) to merge anyway.
var ErrNoMergeBase = fmt.Errorf("no merge base recorded: %w", fs.ErrNotExist)

// MergeBase returns the state (as "WORKSPACE@CHECKPOINT", the checkpoint
// possibly a hidden one) that a merge of state from into workspace into
// uses as their common ancestor. See Workspace.Merge.
func (s *Store) MergeBase(ctx context.Context, into, from string) (string, error) {
	var base string
	err := s.meta.View(ctx, func(tx meta.Tx) (err error) {
		_, base, err = sides(tx, TenantFrom(ctx), into, from)
		return err
	})
	if err != nil {
		return "", fmt.Errorf("merge base of %s and %s: %w", into, from, err)
	}
	return base, nil
}

// sides looks up the state from and the merge base of workspace into and
// from, as a state.
func sides(tx meta.Tx, tenant, into, from string) (theirs *meta.Workspace, base string, err error) {
	ours, err := lookup(tx, tenant, into)
	if err != nil {
		return nil, "", err
	}
	theirs, cp, err := lookupState(tx, tenant, from)
	if err != nil {
		return nil, "", err
	}
	c, err := mergeBase(tx, ours, theirs, cp)
	if err != nil {
		return theirs, "", err
	}
	return theirs, stateName(c.WorkspaceID, c.ID), nil
}

// lookupState finds the workspace of tenant and checkpoint (nil for the
// live head) a state names.
func lookupState(tx meta.Tx, tenant, state string) (*meta.Workspace, *meta.Checkpoint, error) {
	wsRef, cpRef, err := ParseState(state)
	if err != nil {
		return nil, nil, err
	}
	w, err := lookup(tx, tenant, wsRef)
	if err != nil {
		return nil, nil, err
	}
	if cpRef == "" {
		return w, nil, nil
	}
	c, err := findCheckpoint(tx, w.ID, cpRef)
	if err != nil {
		return nil, nil, err
	}
	return w, c, nil
}

// mergeBase finds the common ancestor of workspace ours' head and state
// (theirs, cp), a checkpoint of some workspace:
//
//   - a checkpoint of ours' own (cp of the same workspace): the newest
//     checkpoint of it taken before cp;
//   - else the newest state one of the two recorded of the other (a fork
//     base, or a state an earlier merge brought in), not newer than cp;
//   - else, up the fork lineage, the fork bases on each side below the
//     nearest common workspace, the older of the two.
func mergeBase(tx meta.Tx, ours, theirs *meta.Workspace, cp *meta.Checkpoint) (*meta.Checkpoint, error) {
	noBase := func(why string) error {
		return fmt.Errorf("%w for %s and %s: %s", ErrNoMergeBase, ours.Name, theirs.Name, why)
	}
	if ours.ID == theirs.ID {
		if cp == nil {
			return nil, fmt.Errorf("%w: merging %s into itself", fs.ErrInvalid, ours.Name)
		}
		c, err := newestBefore(tx, ours.ID, cp, func(c *meta.Checkpoint) bool {
			return c.Kind != meta.CheckpointConflict && c.Kind != meta.CheckpointMerged
		})
		if err != nil || c != nil {
			return c, err
		}
		return nil, noBase("no checkpoint of it is older than " + cp.ID)
	}
	recorded := func(c *meta.Checkpoint, other string) bool {
		return (c.Kind == meta.CheckpointBase || c.Kind == meta.CheckpointMerged) && c.Source == other
	}
	a, err := newestBefore(tx, ours.ID, cp, func(c *meta.Checkpoint) bool { return recorded(c, theirs.ID) })
	if err != nil {
		return nil, err
	}
	b, err := newestBefore(tx, theirs.ID, cp, func(c *meta.Checkpoint) bool { return recorded(c, ours.ID) })
	if err != nil {
		return nil, err
	}
	if a != nil && (b == nil || b.CreatedAt.Before(a.CreatedAt)) {
		return a, nil
	}
	if b != nil {
		return b, nil
	}
	// The fork lineage: the nearest workspace both descend from.
	ourChain, err := lineage(tx, ours)
	if err != nil {
		return nil, err
	}
	theirChain, err := lineage(tx, theirs)
	if err != nil {
		return nil, err
	}
	below := map[string]*meta.Workspace{} // ancestor → its child on ours' side
	for i, w := range ourChain {
		if i == 0 {
			below[w.ID] = nil
		} else {
			below[w.ID] = ourChain[i-1]
		}
	}
	for i, w := range theirChain {
		oursChild, ok := below[w.ID]
		if !ok {
			continue
		}
		var bases []*meta.Checkpoint
		for _, child := range []*meta.Workspace{oursChild, childAt(theirChain, i)} {
			if child == nil {
				continue
			}
			c, err := newestBefore(tx, child.ID, nil, func(c *meta.Checkpoint) bool { return c.Kind == meta.CheckpointBase && c.Source == w.ID })
			if err != nil {
				return nil, err
			}
			if c == nil {
				return nil, noBase(fmt.Sprintf("fork %s records no base (forked before merges were tracked)", child.Name))
			}
			bases = append(bases, c)
		}
		base := bases[0]
		if len(bases) == 2 && bases[1].CreatedAt.Before(base.CreatedAt) {
			base = bases[1]
		}
		if cp != nil && cp.CreatedAt.Before(base.CreatedAt) {
			// theirs is an older checkpoint of the common workspace
			c, err := newestBefore(tx, w.ID, cp, func(c *meta.Checkpoint) bool { return c.Kind == meta.CheckpointUser || c.Kind == meta.CheckpointBase })
			if err != nil || c != nil {
				return c, err
			}
			return nil, noBase("no state older than " + cp.ID + " is recorded")
		}
		return base, nil
	}
	return nil, noBase("they share no ancestor")
}

func childAt(chain []*meta.Workspace, i int) *meta.Workspace {
	if i == 0 {
		return nil
	}
	return chain[i-1]
}

// lineage returns w, its parent, the parent's parent… as far as they
// exist.
func lineage(tx meta.Tx, w *meta.Workspace) ([]*meta.Workspace, error) {
	chain := []*meta.Workspace{w}
	seen := map[string]bool{w.ID: true}
	for w.ParentID != "" && !seen[w.ParentID] {
		p, err := tx.Workspace(w.ParentID)
		if errors.Is(err, fs.ErrNotExist) {
			break // deleted: its line ends here
		}
		if err != nil {
			return nil, err
		}
		seen[p.ID] = true
		chain = append(chain, p)
		w = p
	}
	return chain, nil
}

// newestBefore returns the newest checkpoint of workspace wsID that keep
// accepts and that is not newer than before (any age when before is nil;
// before itself is not returned), or nil.
func newestBefore(tx meta.Tx, wsID string, before *meta.Checkpoint, keep func(*meta.Checkpoint) bool) (*meta.Checkpoint, error) {
	cps, err := tx.Checkpoints(wsID)
	if err != nil {
		return nil, err
	}
	for i := len(cps) - 1; i >= 0; i-- {
		c := &cps[i]
		if before != nil && (c.ID == before.ID || before.CreatedAt.Before(c.CreatedAt)) {
			continue
		}
		if keep(c) {
			return c, nil
		}
	}
	return nil, nil
}
