package forkspace

import (
	"context"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/mount"
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

// validLabel checks a checkpoint label.
func validLabel(label string) error {
	if len(label) > maxLabel || strings.ContainsRune(label, 0) {
		return fmt.Errorf("%w: label must be at most %d bytes without NUL", fs.ErrInvalid, maxLabel)
	}
	if _, ok, _ := parseHistoryRef(label); ok {
		return fmt.Errorf("%w: label %q has the form of a recorded state (~N, audit:SEQ, a time)", fs.ErrInvalid, label)
	}
	return nil
}

// Checkpoint records the workspace's current state under label (which may
// be empty). A label may be reused: wherever a checkpoint is named by
// label (Restore, At, Diff, DeleteCheckpoint, ForkOptions) it means the
// newest checkpoint with that label; older ones stay reachable by ID. Its cost does not depend on the size of the workspace: in one
// transaction it records the head's root and copies the bounded staging
// delta, which the store folds into the checkpoint's root in the background.
func (w *Workspace) Checkpoint(ctx context.Context, label string) (Checkpoint, error) {
	if err := validLabel(label); err != nil {
		return Checkpoint{}, fmt.Errorf("checkpoint %s: %w", w.name, err)
	}
	// The head is read from the metadata store: what a FUSE mount
	// deferred (vfs.WithDeferredCommit) must be there first.
	if err := w.Settle(ctx); err != nil {
		return Checkpoint{}, fmt.Errorf("checkpoint %s: %w", w.name, err)
	}
	unlock, err := w.store.roots.hold(ctx)
	if err != nil {
		return Checkpoint{}, fmt.Errorf("checkpoint %s: %w", w.name, err)
	}
	defer unlock()
	row := &meta.Checkpoint{ID: newID(checkpointPrefix), WorkspaceID: w.id, Label: label}
	err = w.store.meta.Update(ctx, func(tx meta.Tx) error {
		head, err := tx.Workspace(w.id)
		if err != nil {
			return err
		}
		row.Root = head.Root
		if err := tx.CreateCheckpoint(row); err != nil {
			return err
		}
		return tx.SnapshotStaged(w.id, row.ID)
	})
	if err != nil {
		return Checkpoint{}, fmt.Errorf("checkpoint %s: %w", w.name, err)
	}
	w.store.folder.kick()
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
	out := make([]Checkpoint, 0, len(rows))
	for i := range rows {
		if rows[i].Kind == meta.CheckpointUser {
			out = append(out, checkpointFrom(&rows[i]))
		}
	}
	return out, nil
}

// findCheckpoint resolves ref among the workspace's checkpoints: a
// checkpoint ID (of any kind, so a merge base can be named), or else a
// label of a user checkpoint, which names the newest checkpoint
// carrying it (labels need not be unique; taking a checkpoint under a
// label used before moves the label to the new one, as the automatic
// checkpoints do).
func findCheckpoint(tx meta.Tx, wsID, ref string) (*meta.Checkpoint, error) {
	if h, ok, err := parseHistoryRef(ref); ok || err != nil {
		if err != nil {
			return nil, err
		}
		return findState(tx, wsID, ref, h)
	}
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
	for i := len(cps) - 1; i >= 0; i-- { // oldest first: the newest wins
		if cps[i].Label == ref && cps[i].Kind == meta.CheckpointUser {
			return &cps[i], nil
		}
	}
	return nil, fmt.Errorf("checkpoint %q: %w", ref, fs.ErrNotExist)
}

// checkpoint resolves a checkpoint of this workspace and reads its staging
// delta in the same snapshot: together with c.Root they are its state.
func (w *Workspace) checkpoint(ctx context.Context, ref string) (c *meta.Checkpoint, staged []meta.Staged, err error) {
	err = w.store.meta.View(ctx, func(tx meta.Tx) error {
		if c, err = findCheckpoint(tx, w.id, ref); err != nil {
			return err
		}
		staged, err = stagedOf(tx, c)
		return err
	})
	return c, staged, err
}

// At returns a read-only view of the checkpoint ref (ID or label). It
// implements io/fs; every mutation fails with errdefs.ErrReadOnly.
func (w *Workspace) At(ctx context.Context, ref string) (*vfs.FS, error) {
	c, staged, err := w.checkpoint(ctx, ref)
	if err != nil {
		return nil, fmt.Errorf("open checkpoint %s of %s: %w", ref, w.name, err)
	}
	return vfs.Snapshot(w.store.deps(), c.Root, staged), nil
}

// Restore points the workspace's head back at checkpoint ref, discarding
// what changed since (the checkpoint itself, and any others, remain). Cost
// does not depend on the size of the workspace.
func (w *Workspace) Restore(ctx context.Context, ref string) error {
	unlock, err := w.store.roots.hold(ctx)
	if err != nil {
		return fmt.Errorf("restore %s to %s: %w", w.name, ref, err)
	}
	defer unlock()
	c, staged, err := w.checkpoint(ctx, ref)
	if err != nil {
		return fmt.Errorf("restore %s to %s: %w", w.name, ref, err)
	}
	if err := w.Reset(ctx, c.Root, staged); err != nil {
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
		if c.Kind == stateKind {
			return fmt.Errorf("%w: %s is a recorded state, not a checkpoint (the retention policy drops those)", fs.ErrInvalid, ref)
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
	// scratch makes the fork a scratch fork (ScratchFork).
	scratch bool
}

// Fork creates workspace name as a copy of this one's live state (or of a
// checkpoint). No file is copied: the fork records the same tree root and
// the staging delta, so the cost does not depend on the workspace's files
// or bytes, and the two diverge independently afterwards. A fork of the
// live state records the delta as a reference to this workspace's
// records and opens with a copy-on-write clone of its overlay
// (docs/decisions/028), so its cost does not depend on the staged changes
// either; mutations of this workspace wait for its transaction.
// The fork also keeps the state it started from, as a hidden checkpoint
// (kind meta.CheckpointBase) that lives as long as the fork: the merge base
// of later merges (see MergeBase).
func (w *Workspace) Fork(ctx context.Context, name string, opts ForkOptions) (*Workspace, error) {
	if err := ValidName(name); err != nil {
		return nil, fmt.Errorf("fork %s: %w", w.name, err)
	}
	row := &meta.Workspace{ID: newID(workspacePrefix), Name: name, Tenant: w.tenant, ParentID: w.id, Quota: opts.Quota}
	if row.Quota == (meta.Quota{}) {
		row.Quota = w.Quota()
	}
	if err := w.Settle(ctx); err != nil { // the head is read from the store
		return nil, fmt.Errorf("fork %s: %w", w.name, err)
	}
	unlock, err := w.store.roots.hold(ctx)
	if err != nil {
		return nil, fmt.Errorf("fork %s: %w", w.name, err)
	}
	defer unlock()
	var staged []meta.Staged
	if opts.Checkpoint != "" {
		c, rows, err := w.checkpoint(ctx, opts.Checkpoint)
		if err != nil {
			return nil, fmt.Errorf("fork %s at %s: %w", w.name, opts.Checkpoint, err)
		}
		row.Root, row.OriginCheckpoint, staged = c.Root, c.ID, rows
	}
	w.mounts.mu.Lock()
	specs := slices.Clone(w.mounts.specs)
	w.mounts.mu.Unlock()
	if opts.scratch {
		row.Tenant, specs = scratchTenant, nil
	}
	var from *vfs.Durable // the live state the fork copies, when it mirrors the stored one
	if opts.Checkpoint != "" {
		err = w.store.record(ctx, row, func(tx meta.Tx) error {
			if err := inherit(tx, w.id, row.ID, specs); err != nil {
				return err
			}
			if len(staged) > 0 {
				if err := tx.PutStaged(row.ID, staged); err != nil {
					return err
				}
			}
			return recordBase(tx, row.ID, w.id, row.Root)
		})
	} else {
		// The source's state holds still while the fork copies it, so
		// the fork's overlay is a copy-on-write clone of the source's
		// instead of its stored rows read back and decoded.
		err = w.Hold(func(d *vfs.Durable) error {
			return w.store.record(ctx, row, func(tx meta.Tx) error {
				from = nil // a transaction may run its function again
				if err := inherit(tx, w.id, row.ID, specs); err != nil {
					return err
				}
				head, err := tx.Workspace(w.id)
				if err != nil {
					return err
				}
				if d.Mirrors(head) {
					from = d
				}
				row.Root = head.Root
				if err := tx.SetRoot(row.ID, head.Root); err != nil {
					return err
				}
				if err := tx.CopyStaged(w.id, row.ID); err != nil {
					return err
				}
				return recordBase(tx, row.ID, w.id, row.Root)
			})
		})
	}
	if err != nil {
		return nil, fmt.Errorf("fork %s as %s: %w", w.name, name, err)
	}
	child, err := w.store.openRow(ctx, row, from)
	if err != nil {
		return nil, fmt.Errorf("fork %s as %s: %w", w.name, name, err)
	}
	// The fork inherits the mount table: factories run again for it, and
	// its copies of read-write mounts are local-only (mount.Options.
	// ForkWriteBack).
	if err := child.attachMounts(ctx, specs); err != nil {
		return nil, fmt.Errorf("fork %s: %w", w.name, err)
	}
	return child, nil
}

// inherit gives the new workspace dst the mount table specs and the exec
// policy of src.
func inherit(tx meta.Tx, src, dst string, specs []mount.Spec) error {
	if err := persistMounts(tx, dst, specs); err != nil {
		return err
	}
	return copyExecPolicy(tx, src, dst)
}

// recordBase keeps the state workspace wsID has just been given (root plus
// its staging rows) as its fork base: a hidden checkpoint of kind
// meta.CheckpointBase whose source is the workspace it came from.
func recordBase(tx meta.Tx, wsID, source string, root cas.Hash) error {
	c := &meta.Checkpoint{ID: newID(checkpointPrefix), WorkspaceID: wsID, Root: root, Kind: meta.CheckpointBase, Source: source}
	if err := tx.CreateCheckpoint(c); err != nil {
		return err
	}
	return tx.SnapshotStaged(wsID, c.ID)
}
