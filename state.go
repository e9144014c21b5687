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
// label. The CLI and Diff take states.

// ParseState splits a state into its workspace and checkpoint parts.
func ParseState(state string) (workspace, checkpoint string, err error) {
	workspace, checkpoint, at := strings.Cut(state, "@")
	if workspace == "" || (at && checkpoint == "") {
		return "", "", fmt.Errorf("state %q: %w: want WORKSPACE or WORKSPACE@CHECKPOINT", state, fs.ErrInvalid)
	}
	return workspace, checkpoint, nil
}

// root resolves a state to a tree root; a live head is folded first so the
// root captures every acknowledged write.
func (s *Store) root(ctx context.Context, state string) (cas.Hash, error) {
	wsRef, cpRef, err := ParseState(state)
	if err != nil {
		return cas.Hash{}, err
	}
	w, err := s.Workspace(ctx, wsRef)
	if err != nil {
		return cas.Hash{}, err
	}
	if cpRef == "" {
		return w.Root(ctx)
	}
	c, err := w.checkpoint(ctx, cpRef)
	if err != nil {
		return cas.Hash{}, err
	}
	return c.Root, nil
}

// Snapshot returns a read-only view of a state. For a live head it is the
// state at the time of the call.
func (s *Store) Snapshot(ctx context.Context, state string) (*vfs.FS, error) {
	root, err := s.root(ctx, state)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", state, err)
	}
	return vfs.Snapshot(s.deps(), root), nil
}

// Diff compares two states (live heads, checkpoints, a fork and its
// parent…). Its cost follows the number of changes, not the size of the
// workspaces.
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
		w, err := lookup(tx, ref)
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
