package memmeta

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/forkspace/forkspace/meta"
)

// ownConflicts makes a workspace's conflict table writable, creating it.
func (t *tx) ownConflicts(op, workspaceID string) (map[string]meta.Conflict, error) {
	if err := t.write(op, "conflicts", func() { t.s.conflicts = maps.Clone(t.s.conflicts) }); err != nil {
		return nil, err
	}
	if err := t.needWorkspace(op, workspaceID); err != nil {
		return nil, err
	}
	rows := maps.Clone(t.s.conflicts[workspaceID])
	if rows == nil {
		rows = map[string]meta.Conflict{}
	}
	t.s.conflicts[workspaceID] = rows
	return rows, nil
}

// PutConflicts implements meta.Tx.
func (t *tx) PutConflicts(rows []meta.Conflict) error { return t.putConflicts(rows, false) }

// ImportConflicts implements meta.CopyTx.
func (t *tx) ImportConflicts(rows []meta.Conflict) error { return t.putConflicts(rows, true) }

// putConflicts records rows, created now or, with keepTime, at their
// CreatedAt.
func (t *tx) putConflicts(rows []meta.Conflict, keepTime bool) error {
	for _, c := range rows {
		table, err := t.ownConflicts(fmt.Sprintf("record conflict %q of workspace %q", c.Path, c.WorkspaceID), c.WorkspaceID)
		if err != nil {
			return err
		}
		if !keepTime || c.CreatedAt.IsZero() {
			c.CreatedAt = t.store.now()
		}
		c.CreatedAt = c.CreatedAt.Round(0)
		table[c.Path] = c
	}
	return nil
}

// Conflicts implements meta.Tx.
func (t *tx) Conflicts(workspaceID string) ([]meta.Conflict, error) {
	out := slices.Collect(maps.Values(t.s.conflicts[workspaceID]))
	slices.SortFunc(out, func(a, b meta.Conflict) int { return strings.Compare(a.Path, b.Path) })
	return out, nil
}

// DeleteConflict implements meta.Tx.
func (t *tx) DeleteConflict(workspaceID, path string) error {
	op := fmt.Sprintf("delete conflict %q of workspace %q", path, workspaceID)
	if _, ok := t.s.conflicts[workspaceID][path]; !ok {
		return notExist(op)
	}
	table, err := t.ownConflicts(op, workspaceID)
	if err != nil {
		return err
	}
	delete(table, path)
	return nil
}
