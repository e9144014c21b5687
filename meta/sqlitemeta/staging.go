package sqlitemeta

import (
	"database/sql"
	"fmt"

	"github.com/forkspace/forkspace/meta"
)

const (
	qPutStaged = `INSERT INTO staging (workspace_id, key, value, deleted, seq) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (workspace_id, key) DO UPDATE
		SET value = excluded.value, deleted = excluded.deleted, seq = excluded.seq`
	qStaged       = `SELECT key, value, deleted, seq FROM staging WHERE workspace_id = $1 ORDER BY key`
	qDeleteStaged = `DELETE FROM staging WHERE workspace_id = $1 AND seq <= $2`
)

// PutStaged implements meta.Tx. A missing workspace is fs.ErrNotExist.
func (t *tx) PutStaged(workspaceID string, rows []meta.Staged) error {
	for _, r := range rows {
		key := r.Key
		if key == nil {
			key = []byte{}
		}
		if _, err := t.exec("put staging row", qPutStaged, workspaceID, key, r.Value, r.Deleted, r.Seq); err != nil {
			return fmt.Errorf("workspace %q: %w", workspaceID, err)
		}
	}
	return nil
}

// Staged implements meta.Tx: rows ordered by key, bytewise. An empty Value
// reads back as nil.
func (t *tx) Staged(workspaceID string) ([]meta.Staged, error) {
	var out []meta.Staged
	err := t.query(fmt.Sprintf("list staging rows of workspace %q", workspaceID), qStaged,
		[]any{workspaceID}, func(rows *sql.Rows) error {
			var r meta.Staged
			if err := rows.Scan(&r.Key, &r.Value, &r.Deleted, &r.Seq); err != nil {
				return err
			}
			if len(r.Value) == 0 {
				r.Value = nil
			}
			out = append(out, r)
			return nil
		})
	return out, err
}

// DeleteStaged implements meta.Tx.
func (t *tx) DeleteStaged(workspaceID string, maxSeq int64) error {
	_, err := t.exec(fmt.Sprintf("delete staging rows of workspace %q", workspaceID), qDeleteStaged, workspaceID, maxSeq)
	return err
}
