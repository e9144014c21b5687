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
// threshold, not on the size of either state.
//
// Handles opened before a Reset are stale: every later operation on them
// fails with errdefs.ErrStale, and Close discards their buffered writes
// (reporting ErrStale when there were any), so a restore returns the tree
// exactly to the checkpoint, as ESTALE does on NFS. Open the file again to
// continue.
func (f *FS) Reset(ctx context.Context, root cas.Hash, staged []meta.Staged) error {
	if f.readOnly {
		return &fs.PathError{Op: "reset", Path: ".", Err: errdefs.ErrReadOnly}
	}
	if f.closed.Load() {
		return &fs.PathError{Op: "reset", Path: ".", Err: fs.ErrClosed}
	}
	if err := f.reset(ctx, root, staged); err != nil {
		return err
	}
	// Outside the locks: a watcher may wait for readers of f (a FUSE
	// mount invalidating the kernel's caches).
	f.notify(ctx, Event{Op: "reset", Name: ".", Tree: true})
	return nil
}

func (f *FS) reset(ctx context.Context, root cas.Hash, staged []meta.Staged) error {
	f.foldMu.Lock()
	defer f.foldMu.Unlock()
	f.lockIdle() // no staging row may land after the reset
	defer f.wmu.Unlock()
	f.mu.Lock()
	defer f.mu.Unlock()
	gen := f.headGen.Load()
	err := f.d.Meta.Update(ctx, func(tx meta.Tx) error {
		if f.shared {
			if err := tx.AdvanceHead(f.ws, gen); err != nil {
				return err
			}
		}
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
	if f.shared {
		f.headGen.Store(gen + 1)
	}
	ov, seq := overlayOf(staged)
	f.root, f.ov, f.seq, f.sinceFold = root, ov, max(f.seq, seq), 0
	f.wov = f.ov.Clone()
	f.gen.Add(1)
	f.epoch.Add(1)
	return nil
}

// stale fails with errdefs.ErrStale when the FS was reset since h was
// opened. A commit checks it under the FS write lock, which Reset holds.
func (h *File) stale(op string) error {
	if h.fs.epoch.Load() != h.epoch {
		return h.pathErr(op, fmt.Errorf("%w: the workspace was restored since the file was opened", errdefs.ErrStale))
	}
	return nil
}
