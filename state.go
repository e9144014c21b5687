package forkspace

import (
	"context"
	"fmt"
	"io/fs"
	"strings"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/vfs"
)

// A state names a workspace state in one string: "NAME" (or an ID) is a
// workspace's live head, "NAME@CHECKPOINT" one of its checkpoints by ID or
// label, and "NAME@~N", "NAME@audit:SEQ", "NAME@TIME" a state an audited
// call left it in (history.go). The CLI and Diff take states.

// ParseState splits a state into its workspace and checkpoint parts.
func ParseState(state string) (workspace, checkpoint string, err error) {
	workspace, checkpoint, at := strings.Cut(state, "@")
	if workspace == "" || (at && checkpoint == "") {
		return "", "", fmt.Errorf("state %q: %w: want WORKSPACE or WORKSPACE@CHECKPOINT", state, fs.ErrInvalid)
	}
	if _, _, err := parseHistoryRef(checkpoint); err != nil {
		return "", "", err
	}
	return workspace, checkpoint, nil
}

// resolve reads a state: the workspace's live head, or one of its
// checkpoints, as a root plus a staging delta. For a live head it is the
// durable state at the time of the call.
func (s *Store) resolve(ctx context.Context, state string) (*Workspace, *meta.Checkpoint, cas.Hash, []meta.Staged, error) {
	wsRef, cpRef, err := ParseState(state)
	if err != nil {
		return nil, nil, cas.Hash{}, nil, err
	}
	w, err := s.Workspace(ctx, wsRef)
	if err != nil {
		return nil, nil, cas.Hash{}, nil, err
	}
	if cpRef != "" {
		c, staged, err := w.checkpoint(ctx, cpRef)
		if err != nil {
			return nil, nil, cas.Hash{}, nil, err
		}
		return w, c, c.Root, staged, nil
	}
	if err := w.Settle(ctx); err != nil { // what a FUSE mount deferred
		return nil, nil, cas.Hash{}, nil, err
	}
	var (
		root   cas.Hash
		staged []meta.Staged
	)
	err = s.meta.View(ctx, func(tx meta.Tx) error {
		head, err := tx.Workspace(w.id)
		if err != nil {
			return err
		}
		root = head.Root
		staged, err = tx.Staged(w.id)
		return err
	})
	return w, nil, root, staged, err
}

// Snapshot returns a read-only view of a state, without folding anything.
// For a live head it is the state at the time of the call.
func (s *Store) Snapshot(ctx context.Context, state string) (*vfs.FS, error) {
	_, _, root, staged, err := s.resolve(ctx, state)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", state, err)
	}
	return vfs.Snapshot(s.deps(), root, staged), nil
}

// Diff compares two states (live heads, checkpoints, a fork and its
// parent…). Its cost follows the number of changes and the states' staging
// deltas, not the size of the workspaces; nothing is folded. The changes
// come in the order vfs.Diff documents: applied one after another to from
// (vfs.ApplyDiff), they yield to.
func (s *Store) Diff(ctx context.Context, from, to string, opts vfs.DiffOptions) ([]vfs.Change, error) {
	a, err := s.Snapshot(ctx, from)
	if err != nil {
		return nil, fmt.Errorf("diff: %w", err)
	}
	b, err := s.Snapshot(ctx, to)
	if err != nil {
		return nil, fmt.Errorf("diff: %w", err)
	}
	changes, err := vfs.Diff(ctx, a, b, opts)
	if err != nil {
		return nil, fmt.Errorf("diff %s %s: %w", from, to, err)
	}
	return changes, nil
}

// Parent returns the state a workspace was forked from: its origin
// checkpoint, or its parent's live head. fs.ErrNotExist if it has none or
// the parent was deleted.
func (s *Store) Parent(ctx context.Context, ref string) (string, error) {
	var state string
	err := s.meta.View(ctx, func(tx meta.Tx) error {
		w, err := lookup(tx, TenantFrom(ctx), ref)
		if err != nil {
			return err
		}
		if w.ParentID == "" {
			return fmt.Errorf("workspace %s has no parent: %w", w.Name, fs.ErrNotExist)
		}
		p, err := tx.Workspace(w.ParentID)
		if err != nil {
			return fmt.Errorf("parent of %s: %w", w.Name, err)
		}
		state = p.ID
		if w.OriginCheckpoint != "" {
			state += "@" + w.OriginCheckpoint
		}
		return nil
	})
	return state, err
}
