package vfs

import (
	"context"
	"fmt"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/meta"
)

// Usage returns the workspace's usage: logical bytes of regular files and
// the number of inodes other than the root.
func (f *FS) Usage(ctx context.Context) (Usage, error) {
	var u Usage
	err := f.read(ctx, "usage", ".", func(t *txn) error {
		var err error
		u, err = t.usage(ctx)
		return err
	})
	return u, err
}

// Quota returns the limits f enforces (zero fields are unlimited).
func (f *FS) Quota() meta.Quota { return f.quota }

// usage returns the workspace's recorded usage.
func (t *txn) usage(ctx context.Context) (Usage, error) {
	v, ok, err := t.get(ctx, usageKey)
	if err != nil || !ok {
		return Usage{}, err
	}
	return decodeUsage(v)
}

// StoredUsages returns the recorded usage of each workspace row (by ID)
// without opening the workspaces or reading their staging deltas: the
// usage records still in staging come from one StagedKey read in tx (the
// transaction rows were read in), the others from a point lookup in each
// row's committed tree. A workspace without a record has zero usage.
func StoredUsages(ctx context.Context, d Deps, tx meta.Tx, rows []meta.Workspace) (map[string]Usage, error) {
	staged := make(map[string]meta.Staged, len(rows))
	if err := tx.StagedKey(usageKey, func(id string, r meta.Staged) error {
		staged[id] = r
		return nil
	}); err != nil {
		return nil, fmt.Errorf("read usage: %w", err)
	}
	out := make(map[string]Usage, len(rows))
	for i := range rows {
		u, err := storedUsage(ctx, d, &rows[i], staged)
		if err != nil {
			return nil, fmt.Errorf("read usage of workspace %s: %w", rows[i].Name, err)
		}
		out[rows[i].ID] = u
	}
	return out, nil
}

// storedUsage decodes row's usage record: its staging row if it has one,
// else the record in its committed tree.
func storedUsage(ctx context.Context, d Deps, row *meta.Workspace, staged map[string]meta.Staged) (Usage, error) {
	r, found := staged[row.ID]
	v, ok := r.Value, found && !r.Deleted
	if !found {
		var err error
		if v, ok, err = d.KV.Get(ctx, row.Root, usageKey); err != nil {
			return Usage{}, err
		}
	}
	if !ok {
		return Usage{}, nil
	}
	return decodeUsage(v)
}

// addUsage records a change of usage, failing with errdefs.ErrQuota when a
// growth would pass the quota.
func (t *txn) addUsage(ctx context.Context, bytes, entries int64) error {
	if bytes == 0 && entries == 0 {
		return nil
	}
	u, err := t.usage(ctx)
	if err != nil {
		return err
	}
	u.Bytes += bytes
	u.Entries += entries
	if err := t.f.checkQuota(u, bytes, entries); err != nil {
		return err
	}
	t.set(usageKey, encodeUsage(u))
	return nil
}

// checkQuota fails with errdefs.ErrQuota when u passes f's quota on a
// dimension that grows.
func (f *FS) checkQuota(u Usage, dBytes, dEntries int64) error {
	q := f.quota
	if dBytes > 0 && q.MaxBytes > 0 && u.Bytes > q.MaxBytes {
		return fmt.Errorf("%w: the workspace would hold %d bytes, over its %d-byte quota", errdefs.ErrQuota, u.Bytes, q.MaxBytes)
	}
	if dEntries > 0 && q.MaxEntries > 0 && u.Entries > q.MaxEntries {
		return fmt.Errorf("%w: the workspace would hold %d entries, over its quota of %d", errdefs.ErrQuota, u.Entries, q.MaxEntries)
	}
	return nil
}
