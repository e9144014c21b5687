package sqltx

import (
	"database/sql"
	"fmt"

	"github.com/forkspace/forkspace/meta"
)

const (
	conflictColumns = `workspace_id, path, kind, detail, base_state, base_path, base_hash,
		ours_state, ours_path, ours_hash, theirs_state, theirs_path, theirs_hash, created_at`
	qPutConflict = `INSERT INTO merge_conflicts (` + conflictColumns + `)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, COALESCE($14, ` + nowFunc + `()))
		ON CONFLICT (workspace_id, path) DO UPDATE SET kind = excluded.kind, detail = excluded.detail,
		base_state = excluded.base_state, base_path = excluded.base_path, base_hash = excluded.base_hash,
		ours_state = excluded.ours_state, ours_path = excluded.ours_path, ours_hash = excluded.ours_hash,
		theirs_state = excluded.theirs_state, theirs_path = excluded.theirs_path,
		theirs_hash = excluded.theirs_hash, created_at = excluded.created_at`
	qConflicts      = `SELECT ` + conflictColumns + ` FROM merge_conflicts WHERE workspace_id = $1 ORDER BY path`
	qDeleteConflict = `DELETE FROM merge_conflicts WHERE workspace_id = $1 AND path = $2`
)

// PutConflicts implements meta.Tx.
func (t *Tx) PutConflicts(rows []meta.Conflict) error { return t.putConflicts(rows, false) }

// ImportConflicts implements meta.CopyTx.
func (t *Tx) ImportConflicts(rows []meta.Conflict) error { return t.putConflicts(rows, true) }

// putConflicts records rows, created now or, with keepTime, at their
// CreatedAt.
func (t *Tx) putConflicts(rows []meta.Conflict, keepTime bool) error {
	for _, c := range rows {
		var created any
		if keepTime {
			created = toNanos(c.CreatedAt)
		}
		op := fmt.Sprintf("record conflict %q of workspace %q", c.Path, c.WorkspaceID)
		if err := t.exists(op, qWorkspaceExists, c.WorkspaceID); err != nil {
			return err
		}
		_, err := t.exec(op, qPutConflict, c.WorkspaceID, c.Path, c.Kind, c.Detail,
			c.Base.State, c.Base.Path, c.Base.Hash, c.Ours.State, c.Ours.Path, c.Ours.Hash,
			c.Theirs.State, c.Theirs.Path, c.Theirs.Hash, created)
		if err != nil {
			return err
		}
	}
	return nil
}

// Conflicts implements meta.Tx.
func (t *Tx) Conflicts(workspaceID string) ([]meta.Conflict, error) {
	var out []meta.Conflict
	err := t.query(fmt.Sprintf("list conflicts of workspace %q", workspaceID), qConflicts, []any{workspaceID},
		func(rows *sql.Rows) error {
			var (
				c       meta.Conflict
				created int64
			)
			err := rows.Scan(&c.WorkspaceID, &c.Path, &c.Kind, &c.Detail,
				&c.Base.State, &c.Base.Path, &c.Base.Hash, &c.Ours.State, &c.Ours.Path, &c.Ours.Hash,
				&c.Theirs.State, &c.Theirs.Path, &c.Theirs.Hash, &created)
			c.CreatedAt = fromNanos(created)
			out = append(out, c)
			return err
		})
	return out, err
}

// DeleteConflict implements meta.Tx.
func (t *Tx) DeleteConflict(workspaceID, path string) error {
	return t.execOne(fmt.Sprintf("delete conflict %q of workspace %q", path, workspaceID), qDeleteConflict, workspaceID, path)
}
