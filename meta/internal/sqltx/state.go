package sqltx

import (
	"database/sql"
	"fmt"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/meta"
)

const (
	qWorkspaceExists  = `SELECT 1 FROM workspaces WHERE id = $1`
	qCheckpointExists = `SELECT 1 FROM checkpoints WHERE id = $1`
	qCopyStaged       = `INSERT INTO staging (workspace_id, key, value, deleted, seq)
	SELECT $2, key, value, deleted, seq FROM staging WHERE workspace_id = $1`
	qClearStaged           = `DELETE FROM staging WHERE workspace_id = $1`
	qClearCheckpointStaged = `DELETE FROM checkpoint_staging WHERE checkpoint_id = $1`
	qSnapshotStaged        = `INSERT INTO checkpoint_staging (checkpoint_id, key, value, deleted, seq)
	SELECT $2, key, value, deleted, seq FROM staging WHERE workspace_id = $1`
	qCheckpointStaged    = `SELECT key, value, deleted, seq FROM checkpoint_staging WHERE checkpoint_id = $1 ORDER BY key`
	qSetCheckpointRoot   = `UPDATE checkpoints SET root = $2 WHERE id = $1`
	qUnfoldedCheckpoints = `SELECT DISTINCT checkpoint_id FROM checkpoint_staging ORDER BY checkpoint_id`
)

// exists fails with fs.ErrNotExist unless query (an existence check by ID)
// finds a row.
func (t *Tx) exists(op, query, id string) error {
	found := false
	err := t.query(op, query, []any{id}, func(*sql.Rows) error { found = true; return nil })
	if err == nil && !found {
		err = fmt.Errorf("%s: %w", op, errNoRow)
	}
	return err
}

// CopyStaged implements meta.Tx.
func (t *Tx) CopyStaged(src, dst string) error {
	op := fmt.Sprintf("copy staging rows of workspace %q to %q", src, dst)
	if err := t.exists(op, qWorkspaceExists, src); err != nil {
		return err
	}
	if err := t.exists(op, qWorkspaceExists, dst); err != nil {
		return err
	}
	if _, err := t.exec(op, qClearStaged, dst); err != nil {
		return err
	}
	if _, err := t.exec(op, qCopyStaged, src, dst); err != nil {
		return err
	}
	return t.rebase(dst)
}

// SnapshotStaged implements meta.Tx.
func (t *Tx) SnapshotStaged(workspaceID, checkpointID string) error {
	op := fmt.Sprintf("copy staging rows of workspace %q to checkpoint %q", workspaceID, checkpointID)
	if err := t.exists(op, qWorkspaceExists, workspaceID); err != nil {
		return err
	}
	if err := t.exists(op, qCheckpointExists, checkpointID); err != nil {
		return err
	}
	if _, err := t.exec(op, qClearCheckpointStaged, checkpointID); err != nil {
		return err
	}
	_, err := t.exec(op, qSnapshotStaged, workspaceID, checkpointID)
	return err
}

// CheckpointStaged implements meta.Tx.
func (t *Tx) CheckpointStaged(checkpointID string) ([]meta.Staged, error) {
	return t.stagedRows(fmt.Sprintf("list staging rows of checkpoint %q", checkpointID), qCheckpointStaged, checkpointID)
}

// FoldCheckpoint implements meta.Tx.
func (t *Tx) FoldCheckpoint(checkpointID string, root cas.Hash) error {
	op := fmt.Sprintf("fold checkpoint %q", checkpointID)
	if err := t.execOne(op, qSetCheckpointRoot, checkpointID, rootArg(root)); err != nil {
		return err
	}
	_, err := t.exec(op, qClearCheckpointStaged, checkpointID)
	return err
}

// UnfoldedCheckpoints implements meta.Tx.
func (t *Tx) UnfoldedCheckpoints() ([]string, error) {
	var ids []string
	err := t.query("list unfolded checkpoints", qUnfoldedCheckpoints, nil, func(rows *sql.Rows) error {
		var id string
		if err := rows.Scan(&id); err != nil {
			return err
		}
		ids = append(ids, id)
		return nil
	})
	return ids, err
}
