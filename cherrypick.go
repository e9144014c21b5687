package forkspace

import (
	"context"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/vfs"
)

// CherryPickOptions configure CherryPick.
type CherryPickOptions struct {
	// Changes brings only theirs' changes at or under the paths, merged
	// three-way as Merge does (Base, Policy and conflicts as there),
	// instead of from's version of the paths.
	Changes bool
	// Base and Policy are Merge's, for Changes.
	Base   string
	Policy MergePolicy
	// Label is the label of the checkpoint taken first ("cherry-pick:
	// before FROM" if empty).
	Label string
}

// CherryPick brings paths of state from (any workspace's head or
// checkpoint) into the workspace. By default each path becomes what it is
// in from, with everything beneath a directory (a path from lacks is
// removed; a path neither has is fs.ErrNotExist). With opts.Changes only
// the changes from made at or under the paths since the merge base are
// merged in (Merge, restricted to the paths; it records no merged state,
// so a later Merge still brings everything). Either way a checkpoint of
// the workspace as it was commits with the change, in one transaction.
func (w *Workspace) CherryPick(ctx context.Context, from string, paths []string, opts CherryPickOptions) (MergeResult, error) {
	res, err := w.cherryPick(ctx, from, paths, opts)
	if err != nil {
		return res, fmt.Errorf("cherry-pick %s from %s into %s: %w", strings.Join(paths, " "), from, w.name, err)
	}
	return res, nil
}

// RestorePaths brings only the given paths of the workspace back to
// checkpoint ref (ID or label): CherryPick of those paths from it, labelled
// "restore: before REF".
func (w *Workspace) RestorePaths(ctx context.Context, ref string, paths []string) (MergeResult, error) {
	var state string
	err := w.store.meta.View(ctx, func(tx meta.Tx) error {
		c, err := findCheckpoint(tx, w.id, ref)
		if err == nil {
			state = stateName(w.id, c.ID)
		}
		return err
	})
	if err != nil {
		return MergeResult{}, fmt.Errorf("restore %s of %s to %s: %w", strings.Join(paths, " "), w.name, ref, err)
	}
	res, err := w.cherryPick(ctx, state, paths, CherryPickOptions{Label: "restore: before " + ref})
	res.From = ref
	if err != nil {
		return res, fmt.Errorf("restore %s of %s to %s: %w", strings.Join(paths, " "), w.name, ref, err)
	}
	return res, nil
}

func (w *Workspace) cherryPick(ctx context.Context, from string, paths []string, opts CherryPickOptions) (MergeResult, error) {
	res := MergeResult{Into: w.name, From: from, Changed: []string{}, Conflicts: []Conflict{}}
	if len(paths) == 0 {
		return res, fmt.Errorf("%w: no path to pick", fs.ErrInvalid)
	}
	clean := make([]string, len(paths))
	for i, p := range paths {
		c := strings.TrimPrefix(path.Clean("/"+p), "/")
		if c == "" || strings.HasPrefix(c, tempPrefix) && !strings.Contains(c, "/") {
			return res, fmt.Errorf("%w: path %q: name a file or directory, not the root (use restore or merge)", fs.ErrInvalid, p)
		}
		clean[i] = c
	}
	if opts.Changes {
		return w.merge(ctx, from, MergeOptions{Base: opts.Base, Policy: opts.Policy, Label: opts.Label}, clean)
	}
	if opts.Base != "" || opts.Policy != MergeRecord {
		return res, fmt.Errorf("%w: a base or a policy applies to picking changes only", fs.ErrInvalid)
	}
	label := opts.Label
	if label == "" {
		label = "cherry-pick: before " + from
	}
	if err := validLabel(label); err != nil {
		return res, err
	}
	src, err := w.store.Snapshot(ctx, from)
	if err != nil {
		return res, err
	}
	before := newID(checkpointPrefix)
	err = w.Batch(ctx, func(b *vfs.FS) error {
		for _, p := range clean {
			have, err := readEntry(ctx, src, p)
			if err != nil {
				return err
			}
			cur, err := readEntry(ctx, b, p)
			if err != nil {
				return err
			}
			if !have.exists() && !cur.exists() {
				return &fs.PathError{Op: "cherry-pick", Path: p, Err: fs.ErrNotExist}
			}
			if !have.exists() {
				if err := b.RemoveAll(ctx, p); err != nil {
					return err
				}
			} else if err := putVersion(ctx, b, p, src, p); err != nil {
				return err
			}
			res.Changed = append(res.Changed, p)
		}
		return b.AlsoCommit(func(tx meta.Tx) error { return takeBefore(tx, w.id, before, label) })
	})
	if err != nil {
		return res, err
	}
	slices.Sort(res.Changed)
	res.Checkpoint = before
	w.store.folder.kick()
	return res, nil
}

// takeBefore records, in a batch's commit transaction, a checkpoint of the
// workspace as it was: its head's rows are still the old ones (the
// batch's rows are written after).
func takeBefore(tx meta.Tx, wsID, id, label string) error {
	head, err := tx.Workspace(wsID)
	if err != nil {
		return err
	}
	c := &meta.Checkpoint{ID: id, WorkspaceID: wsID, Label: label, Root: head.Root}
	if err := tx.CreateCheckpoint(c); err != nil {
		return err
	}
	return tx.SnapshotStaged(wsID, id)
}
