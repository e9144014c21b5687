package forkspace

import (
	"context"
	"fmt"
	"io/fs"
	"strings"
	"time"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/vfs"
)

// Checkpoint is an immutable, labelled state of a workspace.
type Checkpoint struct {
	ID          string    `json:"id"`
	WorkspaceID string    `json:"workspace_id"`
	Label       string    `json:"label,omitempty"`
	Root        cas.Hash  `json:"-"`
	CreatedAt   time.Time `json:"created_at"`
}

func checkpointFrom(c *meta.Checkpoint) Checkpoint {
	return Checkpoint{ID: c.ID, WorkspaceID: c.WorkspaceID, Label: c.Label, Root: c.Root, CreatedAt: c.CreatedAt}
}

const maxLabel = 256

// Checkpoint records the workspace's current state under label (which may
// be empty). Its cost does not depend on the size of the workspace: it
// folds the bounded staging delta and records one root hash.
func (w *Workspace) Checkpoint(ctx context.Context, label string) (Checkpoint, error) {
	if len(label) > maxLabel || strings.ContainsRune(label, 0) {
		return Checkpoint{}, fmt.Errorf("checkpoint %s: %w: label must be at most %d bytes without NUL", w.name, fs.ErrInvalid, maxLabel)
	}
	w.store.roots.RLock()
	defer w.store.roots.RUnlock()
	root, err := w.Root(ctx)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("checkpoint %s: %w", w.name, err)
	}
	row := &meta.Checkpoint{ID: newID(checkpointPrefix), WorkspaceID: w.id, Label: label, Root: root}
	err = w.store.meta.Update(ctx, func(tx meta.Tx) error { return tx.CreateCheckpoint(row) })
	if err != nil {
		return Checkpoint{}, fmt.Errorf("checkpoint %s: %w", w.name, err)
	}
	return checkpointFrom(row), nil
}

// Checkpoints lists the workspace's checkpoints, oldest first.
func (w *Workspace) Checkpoints(ctx context.Context) ([]Checkpoint, error) {
	var rows []meta.Checkpoint
	err := w.store.meta.View(ctx, func(tx meta.Tx) error {
		var err error
		rows, err = tx.Checkpoints(w.id)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list checkpoints of %s: %w", w.name, err)
	}
	out := make([]Checkpoint, len(rows))
	for i := range rows {
		out[i] = checkpointFrom(&rows[i])
	}
	return out, nil
}

// findCheckpoint resolves ref (a checkpoint ID, or a label unique within
// the workspace) among the workspace's checkpoints.
func findCheckpoint(tx meta.Tx, wsID, ref string) (*meta.Checkpoint, error) {
	if strings.HasPrefix(ref, checkpointPrefix) {
		c, err := tx.Checkpoint(ref)
		if err == nil && c.WorkspaceID == wsID {
			return c, nil
		}
	}
	cps, err := tx.Checkpoints(wsID)
	if err != nil {
		return nil, err
	}
	var found *meta.Checkpoint
	for i := range cps {
		if cps[i].Label == ref {
			if found != nil {
				return nil, fmt.Errorf("checkpoint %q: %w: label names several checkpoints; use an ID", ref, fs.ErrInvalid)
			}
			found = &cps[i]
		}
	}
	if found == nil {
		return nil, fmt.Errorf("checkpoint %q: %w", ref, fs.ErrNotExist)
	}
	return found, nil
}

// checkpoint resolves a checkpoint of this workspace.
func (w *Workspace) checkpoint(ctx context.Context, ref string) (*meta.Checkpoint, error) {
	var c *meta.Checkpoint
	err := w.store.meta.View(ctx, func(tx meta.Tx) error {
		var err error
		c, err = findCheckpoint(tx, w.id, ref)
		return err
	})
	return c, err
}

// At returns a read-only view of the checkpoint ref (ID or label). It
// implements io/fs; every mutation fails with errdefs.ErrReadOnly.
func (w *Workspace) At(ctx context.Context, ref string) (*vfs.FS, error) {
	c, err := w.checkpoint(ctx, ref)
	if err != nil {
		return nil, fmt.Errorf("open checkpoint %s of %s: %w", ref, w.name, err)
	}
	return vfs.Snapshot(w.store.deps(), c.Root), nil
}

// Restore points the workspace's head back at checkpoint ref, discarding
// what changed since (the checkpoint itself, and any others, remain). Cost
// does not depend on the size of the workspace.
func (w *Workspace) Restore(ctx context.Context, ref string) error {
	w.store.roots.RLock()
	defer w.store.roots.RUnlock()
	c, err := w.checkpoint(ctx, ref)
	if err != nil {
		return fmt.Errorf("restore %s to %s: %w", w.name, ref, err)
	}
	if err := w.Reset(ctx, c.Root); err != nil {
		return fmt.Errorf("restore %s to %s: %w", w.name, ref, err)
	}
	return nil
}

// DeleteCheckpoint removes checkpoint ref of the workspace. Its data stays
// as long as any workspace or other checkpoint reaches it.
func (w *Workspace) DeleteCheckpoint(ctx context.Context, ref string) error {
	err := w.store.meta.Update(ctx, func(tx meta.Tx) error {
		c, err := findCheckpoint(tx, w.id, ref)
		if err != nil {
			return err
		}
		return tx.DeleteCheckpoint(c.ID)
	})
	if err != nil {
		return fmt.Errorf("delete checkpoint %s of %s: %w", ref, w.name, err)
	}
	return nil
}

// ForkOptions configure a fork.
type ForkOptions struct {
	// Checkpoint forks from this checkpoint (ID or label) of the source
	// instead of its live state.
	Checkpoint string
	// Quota of the fork; zero inherits the source's quota.
	Quota meta.Quota
}

// Fork creates workspace name as a copy of this one's live state (or of a
// checkpoint). Nothing is copied: the fork records the same tree root, so
// the cost does not depend on the workspace's files or bytes, and the two
// diverge independently afterwards.
func (w *Workspace) Fork(ctx context.Context, name string, opts ForkOptions) (*Workspace, error) {
	if err := ValidName(name); err != nil {
		return nil, fmt.Errorf("fork %s: %w", w.name, err)
	}
	row := &meta.Workspace{ID: newID(workspacePrefix), Name: name, ParentID: w.id, Quota: opts.Quota}
	w.store.roots.RLock()
	defer w.store.roots.RUnlock()
	if opts.Checkpoint != "" {
		c, err := w.checkpoint(ctx, opts.Checkpoint)
		if err != nil {
			return nil, fmt.Errorf("fork %s at %s: %w", w.name, opts.Checkpoint, err)
		}
		row.Root, row.OriginCheckpoint = c.Root, c.ID
	} else {
		root, err := w.Root(ctx)
		if err != nil {
			return nil, fmt.Errorf("fork %s: %w", w.name, err)
		}
		row.Root = root
	}
	if row.Quota == (meta.Quota{}) {
		row.Quota = w.Quota()
	}
	return w.store.insert(ctx, "fork "+w.name+" as", row, nil)
}
