package vfs

import (
	"context"
	"fmt"
	"io/fs"
	"math"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/meta"
)

// Reset replaces the live state with another state (a checkpoint's): the
// tree rooted at root with the staging rows staged on top. In one metadata
// transaction the workspace's staging rows are replaced by staged and the
// head points at root. The cost depends on len(staged), bounded by the fold
// threshold, not on the size of either state. Handles open across a Reset keep working: one whose inode
// does not exist in the new state records nothing when it syncs; one whose
// inode exists writes its content over it.
func (f *FS) Reset(ctx context.Context, root cas.Hash, staged []meta.Staged) error {
	if f.readOnly {
		return &fs.PathError{Op: "reset", Path: ".", Err: errdefs.ErrReadOnly}
	}
	if f.closed.Load() {
		return &fs.PathError{Op: "reset", Path: ".", Err: fs.ErrClosed}
	}
	f.foldMu.Lock()
	defer f.foldMu.Unlock()
	f.lockIdle() // no staging row may land after the reset
	defer f.wmu.Unlock()
	f.mu.Lock()
	defer f.mu.Unlock()
	err := f.d.Meta.Update(ctx, func(tx meta.Tx) error {
		if err := tx.DeleteStaged(f.ws, math.MaxInt64); err != nil {
			return err
		}
		if len(staged) > 0 {
			if err := tx.PutStaged(f.ws, staged); err != nil {
				return err
			}
		}
		return tx.SetRoot(f.ws, root)
	})
	if err != nil {
		return fmt.Errorf("reset workspace %s: %w", f.ws, err)
	}
	ov, seq := overlayOf(staged)
	f.root, f.ov, f.seq = root, ov, max(f.seq, seq)
	f.wov = f.ov.Clone()
	f.gen.Add(1)
	return nil
}
