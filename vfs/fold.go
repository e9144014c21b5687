package vfs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/kv"
	"github.com/forkspace/forkspace/meta"
)

// Fold folds the staged mutations into a new tree root: kv.Apply over the
// overlay's mutations, then one metadata transaction stores the new nodes,
// points the workspace head at the new root and deletes the folded staging
// rows. Mutations staged meanwhile stay staged. The visible state does not
// change. A snapshot folds the delta it was opened with into a root of its
// own (storing the nodes, recording nothing else). Folding with nothing
// staged does nothing. Safe to call concurrently with anything; folds are
// serialised.
func (f *FS) Fold(ctx context.Context) error {
	_ = f.settle() // fold what was acknowledged
	f.foldMu.Lock()
	defer f.foldMu.Unlock()
	if f.readOnly {
		return f.foldSnapshotLocked(ctx)
	}
	return f.foldLocked(ctx)
}

// foldSnapshotLocked folds a snapshot's delta; the caller holds foldMu.
func (f *FS) foldSnapshotLocked(ctx context.Context) error {
	root, objs, err := f.FoldedRoot(ctx)
	if err != nil || len(objs) == 0 && root == f.root {
		return err
	}
	if len(objs) > 0 {
		if err := f.d.Meta.Update(ctx, func(tx meta.Tx) error { return tx.PutNodes(objs) }); err != nil {
			return fmt.Errorf("fold snapshot: %w", err)
		}
	}
	f.mu.Lock()
	f.root, f.ov = root, nil
	f.mu.Unlock()
	return nil
}

// FoldedRoot returns the root of a snapshot's state with its delta folded
// in, and the tree nodes that root needs, without storing anything: the
// caller stores the nodes in the transaction that records the root
// (meta.Tx.PutNodes), so folding costs no commit of its own.
func (f *FS) FoldedRoot(ctx context.Context) (cas.Hash, []meta.Object, error) {
	f.mu.RLock()
	ov, root := f.ov, f.root
	f.mu.RUnlock()
	if !f.readOnly {
		return cas.Hash{}, nil, fmt.Errorf("fold: %w: not a snapshot", errors.ErrUnsupported)
	}
	if ov == nil || ov.Len() == 0 {
		return root, nil, nil
	}
	muts, _ := ov.Mutations()
	newRoot, objs, err := f.apply(ctx, root, muts)
	if err != nil {
		return cas.Hash{}, nil, fmt.Errorf("fold snapshot: %w", err)
	}
	return newRoot, objs, nil
}

// apply returns the root of the tree muts make of root, and the tree
// nodes it needs that were not stored, to store before anything names it.
func (f *FS) apply(ctx context.Context, root cas.Hash, muts []kv.Mutation) (cas.Hash, []meta.Object, error) {
	newRoot, nodes, err := f.d.KV.Apply(ctx, root, muts)
	if err != nil {
		return cas.Hash{}, nil, err
	}
	objs := make([]meta.Object, len(nodes))
	for i, n := range nodes {
		objs[i] = meta.Object{Hash: n.Hash, Data: n.Data}
	}
	return newRoot, objs, nil
}

// foldLocked folds; the caller holds foldMu.
func (f *FS) foldLocked(ctx context.Context) error {
	if f.closed.Load() {
		return &fs.PathError{Op: "fold", Path: ".", Err: fs.ErrClosed}
	}
	if f.batch != nil {
		return &fs.PathError{Op: "fold", Path: ".", Err: fmt.Errorf("%w: inside a batch", errors.ErrUnsupported)}
	}
	f.mu.Lock()
	muts, maxSeq := f.ov.Mutations()
	root := f.root
	reloads := f.reloads.Load()
	f.mu.Unlock()
	if len(muts) == 0 {
		return nil
	}
	newRoot, objs, err := f.apply(ctx, root, muts)
	if err != nil {
		return fmt.Errorf("fold workspace %s: %w", f.ws, err)
	}
	// In a shared workspace the fold advances the head generation, so
	// other processes drop the root it replaces (docs/decisions/023): it
	// commits with no mutation in flight, and only if no other process
	// changed the workspace since it read the overlay (a reload means one
	// did).
	var gen int64
	if f.shared {
		f.lockIdle()
		defer f.wmu.Unlock()
		if f.reloads.Load() != reloads {
			return fmt.Errorf("fold workspace %s: %w", f.ws, meta.ErrHeadMoved)
		}
		gen = f.headGen.Load()
	}
	err = f.d.Meta.Update(ctx, func(tx meta.Tx) error {
		if f.shared {
			if err := tx.AdvanceHead(f.ws, gen); err != nil {
				return err
			}
		}
		if len(objs) > 0 {
			if err := tx.PutNodes(objs); err != nil {
				return err
			}
		}
		if err := tx.SetRoot(f.ws, newRoot); err != nil {
			return err
		}
		return tx.DeleteStaged(f.ws, maxSeq)
	})
	if err != nil {
		return fmt.Errorf("fold workspace %s: %w", f.ws, err)
	}
	// Readers saw root + overlay until now; they see newRoot + what was
	// staged after maxSeq from here on: the same state. Writers likewise
	// (mutations not yet durable have higher seqs and stay in wov).
	if f.shared {
		f.headGen.Store(gen + 1)
	} else {
		f.wmu.Lock()
		defer f.wmu.Unlock()
	}
	f.mu.Lock()
	f.root, f.sinceFold = newRoot, 0
	f.ov.Drop(maxSeq)
	f.wov.Drop(maxSeq)
	f.mu.Unlock()
	return nil
}

// Root folds staging and returns the tree root that holds the whole current
// state (for a snapshot, its root with its delta folded in).
func (f *FS) Root(ctx context.Context) (cas.Hash, error) {
	if err := f.Fold(ctx); err != nil {
		return cas.Hash{}, err
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.root, nil
}
