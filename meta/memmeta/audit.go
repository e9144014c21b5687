package memmeta

import (
	"fmt"
	"slices"

	"github.com/forkspace/forkspace/meta"
)

var _ meta.AuditTx = (*tx)(nil)

// AppendAudit implements meta.AuditTx.
func (t *tx) AppendAudit(e *meta.AuditEntry) error {
	op := fmt.Sprintf("append audit entry %q", e.Tool)
	seq, err := t.Allocate(meta.AuditCounter, 1)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	e.Seq = seq
	if e.Time.IsZero() {
		e.Time = t.store.now()
	}
	e.Time = e.Time.Round(0)
	row := *e
	row.Changed = slices.Clone(e.Changed)
	// Appending may write past the end of a slice a published state
	// shares, which that state never reads (its length is fixed), and
	// Updates run one at a time.
	t.s.audit = append(t.s.audit, row)
	return nil
}

// Audit implements meta.AuditTx: newest first, or oldest first with
// f.Ascending.
func (t *tx) Audit(f meta.AuditFilter) ([]meta.AuditEntry, error) {
	var out []meta.AuditEntry
	n := len(t.s.audit)
	for k := 0; k < n && (f.Limit <= 0 || len(out) < f.Limit); k++ {
		i := n - 1 - k
		if f.Ascending {
			i = k
		}
		e := t.s.audit[i]
		if (f.WorkspaceID != "" && e.WorkspaceID != f.WorkspaceID) ||
			(f.Session != "" && e.Session != f.Session) || (f.Before != 0 && e.Seq >= f.Before) ||
			e.Seq <= f.After {
			continue
		}
		e.Changed = slices.Clone(e.Changed)
		e.State = t.hasState(e.Seq)
		out = append(out, e)
	}
	return out, nil
}
