package forkspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/kv"
	"github.com/forkspace/forkspace/meta"
)

// A checkpoint is taken by copying the workspace's staging delta beside the
// head's root (constant time); the folder then folds that delta into a new
// root for the checkpoint, in the background, one checkpoint at a time, so
// checkpoints do not keep staging rows for long. The checkpoint's state
// does not change when it is folded.
type checkpointFolder struct {
	s      *Store
	wake   chan struct{}
	cancel context.CancelFunc
	done   sync.WaitGroup
}

func (s *Store) startFolder() {
	ctx, cancel := context.WithCancel(context.Background())
	f := &checkpointFolder{s: s, wake: make(chan struct{}, 1), cancel: cancel}
	f.done.Add(1)
	go f.run(ctx)
	s.folder = f
	f.kick() // checkpoints a previous process left unfolded
}

// kick asks the folder to look for unfolded checkpoints.
func (f *checkpointFolder) kick() {
	select {
	case f.wake <- struct{}{}:
	default: // a pass is already due
	}
}

// stop ends the folder and waits for its current fold.
func (f *checkpointFolder) stop() {
	f.cancel()
	f.done.Wait()
}

func (f *checkpointFolder) run(ctx context.Context) {
	defer f.done.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case <-f.wake:
		}
		if err := f.s.FoldCheckpoints(ctx); err != nil && ctx.Err() == nil {
			// The delta stays; reads and diffs of the checkpoint still see
			// its whole state, and the next pass retries.
			f.s.log.Warn("fold checkpoints", "err", err)
		}
	}
}

// FoldCheckpoints folds the staging delta of every checkpoint that still
// has one, now, instead of waiting for the background folder. The
// checkpoints' states do not change.
func (s *Store) FoldCheckpoints(ctx context.Context) error {
	var ids []string
	err := s.meta.View(ctx, func(tx meta.Tx) (err error) {
		ids, err = tx.UnfoldedCheckpoints()
		return err
	})
	for _, id := range ids {
		if err != nil {
			break
		}
		if _, err = s.foldCheckpoint(ctx, id); errors.Is(err, fs.ErrNotExist) {
			err = nil // deleted since it was listed: nothing to fold
		}
	}
	return err
}

// foldCheckpoint folds a checkpoint's staging delta into a new root, records
// it and returns it (the current root when there is nothing to fold).
// Concurrent folds of one checkpoint compute the same root.
func (s *Store) foldCheckpoint(ctx context.Context, id string) (cas.Hash, error) {
	if seq, ok := stateSeq(id); ok {
		return s.foldState(ctx, seq)
	}
	var (
		c    *meta.Checkpoint
		rows []meta.Staged
	)
	err := s.meta.View(ctx, func(tx meta.Tx) (err error) {
		if c, err = tx.Checkpoint(id); err != nil {
			return err
		}
		rows, err = tx.CheckpointStaged(id)
		return err
	})
	if err != nil {
		return cas.Hash{}, fmt.Errorf("fold checkpoint %s: %w", id, err)
	}
	if len(rows) == 0 {
		return c.Root, nil
	}
	muts := make([]kv.Mutation, len(rows))
	for i, r := range rows {
		muts[i] = kv.Mutation{Key: r.Key, Value: r.Value, Delete: r.Deleted}
	}
	root, nodes, err := s.kv.Apply(ctx, c.Root, muts)
	if err != nil {
		return cas.Hash{}, fmt.Errorf("fold checkpoint %s: %w", id, err)
	}
	err = s.meta.Update(ctx, func(tx meta.Tx) error {
		if len(nodes) > 0 {
			if err := tx.PutNodes(toObjects(nodes)); err != nil {
				return err
			}
		}
		return tx.FoldCheckpoint(id, root)
	})
	if errors.Is(err, fs.ErrNotExist) {
		return root, nil // deleted meanwhile: nothing to record
	}
	if err != nil {
		return cas.Hash{}, fmt.Errorf("fold checkpoint %s: %w", id, err)
	}
	return root, nil
}
