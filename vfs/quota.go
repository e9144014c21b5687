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
	err := f.read("usage", ".", func(t *txn) error {
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
