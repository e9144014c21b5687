package memmeta

import (
	"cmp"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"

	"github.com/forkspace/forkspace/meta"
)

var _ meta.CopyTx = (*tx)(nil)

// Settings implements meta.CopyTx.
func (t *tx) Settings() (map[string]string, error) { return maps.Clone(t.s.settings), nil }

// Counters implements meta.CopyTx.
func (t *tx) Counters() (map[string]int64, error) { return maps.Clone(t.s.counters), nil }

// RaiseCounter implements meta.CopyTx.
func (t *tx) RaiseCounter(name string, next int64) error {
	if err := t.write(fmt.Sprintf("raise counter %q to %d", name, next), "counters", func() { t.s.counters = maps.Clone(t.s.counters) }); err != nil {
		return err
	}
	t.s.counters[name] = max(t.s.counters[name], next)
	return nil
}

// SessionRefsAll implements meta.CopyTx.
func (t *tx) SessionRefsAll() ([]meta.SessionRef, error) {
	out := make([]meta.SessionRef, 0, len(t.s.sessionRefs))
	for _, r := range t.s.sessionRefs {
		r.Ref = slices.Clone(r.Ref)
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b meta.SessionRef) int {
		return cmp.Or(strings.Compare(a.Session, b.Session), strings.Compare(a.Name, b.Name))
	})
	return out, nil
}

// States implements meta.CopyTx.
func (t *tx) States(workspaceID string) ([]meta.State, error) {
	var out []meta.State
	for _, r := range t.s.history {
		if r.WorkspaceID == workspaceID {
			out = append(out, r.State)
		}
	}
	return out, nil
}

// ImportState implements meta.CopyTx.
func (t *tx) ImportState(s meta.State, staged []meta.Staged) error {
	op := fmt.Sprintf("import state of workspace %q for audit entry %d", s.WorkspaceID, s.Seq)
	if err := t.writable(op); err != nil {
		return err
	}
	if n := len(t.s.history); n > 0 && t.s.history[n-1].Seq >= s.Seq {
		return fmt.Errorf("%s: %w: a state with seq %d is recorded", op, fs.ErrInvalid, t.s.history[n-1].Seq)
	}
	if err := t.needWorkspace(op, s.WorkspaceID); err != nil {
		return err
	}
	table := map[string]meta.Staged{}
	putRows(table, staged)
	s.Time = s.Time.Round(0)
	t.s.history = append(slices.Clip(t.s.history), recorded{State: s, staged: table, ord: t.newestOrd(s.WorkspaceID) + 1})
	return nil
}

// ImportCheckpointStaged implements meta.CopyTx.
func (t *tx) ImportCheckpointStaged(checkpointID string, rows []meta.Staged) error {
	op := fmt.Sprintf("import staging rows of checkpoint %q", checkpointID)
	if err := t.writable(op); err != nil {
		return err
	}
	if err := t.needCheckpoint(op, checkpointID); err != nil {
		return err
	}
	putRows(t.owned.ownStaging(t.s, checkpointOwner(checkpointID)), rows)
	return nil
}

// ImportAudit implements meta.CopyTx.
func (t *tx) ImportAudit(entries []meta.AuditEntry) error {
	const op = "import audit entries"
	if err := t.writable(op); err != nil {
		return err
	}
	var last int64
	if n := len(t.s.audit); n > 0 {
		last = t.s.audit[n-1].Seq
	}
	for _, e := range entries {
		if e.Seq <= last {
			return fmt.Errorf("%s: %w: seq %d does not follow %d", op, fs.ErrInvalid, e.Seq, last)
		}
		last = e.Seq
	}
	for _, e := range entries {
		e.Time, e.State = e.Time.Round(0), false
		e.Changed = slices.Clone(e.Changed)
		t.s.audit = append(t.s.audit, e)
	}
	return nil
}

// ImportTenant implements meta.CopyTx.
func (t *tx) ImportTenant(tn meta.Tenant) error {
	op := fmt.Sprintf("import tenant %q", tn.Name)
	if tn.Name == "" {
		return fmt.Errorf("%s: %w: empty name", op, fs.ErrInvalid)
	}
	if err := t.write(op, "tenants", func() { t.s.tenants = maps.Clone(t.s.tenants) }); err != nil {
		return err
	}
	t.s.tenants[tn.Name] = tn.CreatedAt.UTC().Round(0)
	return nil
}
