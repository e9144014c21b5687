package gc

import (
	"context"
	"fmt"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/meta"
)

// Execute deletes the plan's garbage and returns what it reclaimed:
//
//  1. condemn: one transaction records the garbage blobs (dropping blobs a
//     crashed run left condemned but not yet deleting);
//  2. re-check: one transaction reprieves every condemned blob a writer
//     took an intent on since the snapshot, and marks the rest deleting
//     (writers now wait for them, then store them again);
//  3. delete the blobs in state deleting, then drop their records;
//  4. delete garbage nodes and inline bodies not touched since the cutoff,
//     in batches;
//  5. forget released intents older than the cutoff and pending ones past
//     Options.IntentExpiry.
//
// Execute is idempotent and may run while the store is in use; a crash
// anywhere leaves a state the next run (or Recover) finishes. It must not
// run concurrently with another Execute of the same store.
func (p *Plan) Execute(ctx context.Context) (Counts, error) {
	var got Counts
	err := p.update(ctx, func(tx meta.Tx) error {
		old, err := tx.Condemned()
		if err != nil {
			return err
		}
		var stale []cas.Hash
		for _, c := range old {
			if !c.Deleting {
				stale = append(stale, c.Hash)
			}
		}
		if err := tx.Uncondemn(stale); err != nil {
			return err
		}
		return tx.Condemn(p.Blobs)
	})
	if err != nil {
		return got, fmt.Errorf("condemn blobs: %w", err)
	}
	var deleting []cas.Hash
	err = p.update(ctx, func(tx meta.Tx) error {
		var err error
		deleting, err = tx.MarkDeleting(p.Cutoff)
		return err
	})
	if err != nil {
		return got, fmt.Errorf("re-check condemned blobs: %w", err)
	}
	if got.Blobs, got.BlobBytes, err = deleteBlobs(ctx, p.deps, p.opts, deleting, p.sizes); err != nil {
		return got, err
	}

	p.opts.progress("delete nodes", 0, int64(len(p.Nodes)+len(p.Bodies)))
	var done int64
	err = inBatches(p.Nodes, func(hs []cas.Hash) error {
		return p.update(ctx, func(tx meta.Tx) error {
			n, err := tx.DeleteNodes(hs, p.Cutoff)
			got.Nodes += int64(n)
			done += int64(len(hs))
			p.opts.progress("delete nodes", done, int64(len(p.Nodes)+len(p.Bodies)))
			return err
		})
	})
	if err != nil {
		return got, fmt.Errorf("delete nodes: %w", err)
	}
	err = inBatches(p.Bodies, func(hs []cas.Hash) error {
		return p.update(ctx, func(tx meta.Tx) error {
			n, err := tx.DeleteInline(hs, p.Cutoff)
			got.Bodies += int64(n)
			done += int64(len(hs))
			p.opts.progress("delete nodes", done, int64(len(p.Nodes)+len(p.Bodies)))
			return err
		})
	})
	if err != nil {
		return got, fmt.Errorf("delete inline bodies: %w", err)
	}
	// Sizes of deleted nodes and bodies: the plan's, when every one went.
	if got.Nodes == p.Garbage.Nodes {
		got.NodeBytes = p.Garbage.NodeBytes
	}
	if got.Bodies == p.Garbage.Bodies {
		got.BodyBytes = p.Garbage.BodyBytes
	}
	err = p.update(ctx, func(tx meta.Tx) error { return tx.ForgetIntents(p.Cutoff, p.intentsBefore) })
	if err != nil {
		return got, fmt.Errorf("forget upload intents: %w", err)
	}
	p.opts.Logger.Info("collected garbage", "nodes", got.Nodes, "bodies", got.Bodies, "blobs", got.Blobs, "bytes", got.Bytes())
	return got, nil
}

// deleteBlobs deletes blobs in state deleting and drops their records. It
// returns how many it deleted and their bytes (sizes from the plan when
// known, else from the blob store).
func deleteBlobs(ctx context.Context, d Deps, o Options, hs []cas.Hash, sizes map[cas.Hash]int64) (n, bytes int64, err error) {
	o.progress("delete blobs", 0, int64(len(hs)))
	err = inBatches(hs, func(batch []cas.Hash) error {
		for i, h := range batch {
			size, ok := sizes[h]
			if !ok {
				if bi, err := d.Blobs.Stat(ctx, h); err == nil {
					size = bi.Size
				}
			}
			if err := d.Blobs.Delete(ctx, h); err != nil {
				return fmt.Errorf("delete blob %s: %w", h.Short(), err)
			}
			n++
			bytes += size
			if i%64 == 63 {
				o.progress("delete blobs", n, int64(len(hs)))
			}
		}
		o.progress("delete blobs", n, int64(len(hs)))
		return d.Meta.Update(ctx, func(tx meta.Tx) error { return tx.Uncondemn(batch) })
	})
	return n, bytes, err
}

// Recover finishes what a collection that crashed left: blobs in state
// deleting are deleted (writers are waiting for them), and blobs only
// condemned are reprieved. Run it when a store opens, before writers
// start; it is cheap when there is nothing to do.
func Recover(ctx context.Context, d Deps) error {
	var cs []meta.Condemned
	err := d.Meta.View(ctx, func(tx meta.Tx) error {
		var err error
		cs, err = tx.Condemned()
		return err
	})
	if err != nil || len(cs) == 0 {
		return err
	}
	var deleting, condemned []cas.Hash
	for _, c := range cs {
		if c.Deleting {
			deleting = append(deleting, c.Hash)
		} else {
			condemned = append(condemned, c.Hash)
		}
	}
	err = d.Meta.Update(ctx, func(tx meta.Tx) error { return tx.Uncondemn(condemned) })
	if err != nil {
		return fmt.Errorf("recover collection: %w", err)
	}
	if _, _, err := deleteBlobs(ctx, d, Options{}, deleting, nil); err != nil {
		return fmt.Errorf("recover collection: %w", err)
	}
	return nil
}
