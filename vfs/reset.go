package vfs

import (
	"context"
	"fmt"
	"io/fs"
	"math"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/kv"
	"github.com/forkspace/forkspace/meta"
)

// Reset replaces the live state with the tree rooted at root (a
// checkpoint's): in one metadata transaction the staging rows are discarded
// and the head points at root. The cost does not depend on the size of
// either state. Handles open across a Reset keep working: one whose inode
// does not exist in the new state records nothing when it syncs; one whose
// inode exists writes its content over it.
func (f *FS) Reset(ctx context.Context, root cas.Hash) error {
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
		return tx.SetRoot(f.ws, root)
	})
	if err != nil {
		return fmt.Errorf("reset workspace %s: %w", f.ws, err)
	}
	f.root, f.ov = root, kv.NewOverlay()
	f.wov = f.ov.Clone()
	f.gen.Add(1)
	return nil
}
