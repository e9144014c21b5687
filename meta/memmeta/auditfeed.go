package memmeta

import (
	"slices"
	"strconv"
	"time"

	"github.com/forkspace/forkspace/meta"
)

// PruneAudit implements meta.AuditTx.
func (t *tx) PruneAudit(before time.Time) (int64, error) {
	if err := t.writable("prune audit log"); err != nil {
		return 0, err
	}
	n := 0
	for i, e := range t.s.audit {
		if e.Time.Before(before) {
			n = i + 1
		}
	}
	if n == 0 {
		return 0, nil
	}
	through := t.s.audit[n-1].Seq
	// A new slice: published states keep theirs.
	t.s.audit = slices.Clone(t.s.audit[n:])
	prev, err := t.AuditPruned()
	if err != nil || prev >= through {
		return through, err
	}
	return through, t.SetSetting(meta.AuditPrunedSetting, strconv.FormatInt(through, 10))
}

// AuditPruned implements meta.AuditTx.
func (t *tx) AuditPruned() (int64, error) { return meta.AuditPrunedMark(t) }
