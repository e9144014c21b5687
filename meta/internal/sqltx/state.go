package sqltx

import (
	"database/sql"
	"errors"
	"fmt"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/meta"
)

const (
	qWorkspaceExists  = `SELECT 1 FROM workspaces WHERE id = $1`
	qCheckpointExists = `SELECT 1 FROM checkpoints WHERE id = $1`
	// A checkpoint's delta is one row: its staging rows encoded in key
	// order (meta.AppendDelta), or a reference to its own workspace's
	// records in (base, ver].
	qClearCheckpointStaged = `DELETE FROM checkpoint_deltas WHERE checkpoint_id = $1`
	qPutCheckpointStaged   = `INSERT INTO checkpoint_deltas (checkpoint_id, body) VALUES ($1, $2)
	ON CONFLICT (checkpoint_id) DO UPDATE SET body = excluded.body, workspace_id = NULL, base = NULL, ver = NULL`
	qRefCheckpointStaged = `INSERT INTO checkpoint_deltas (checkpoint_id, workspace_id, base, ver) VALUES ($1, $2, $3, $4)
	ON CONFLICT (checkpoint_id) DO UPDATE SET body = NULL, workspace_id = excluded.workspace_id, base = excluded.base, ver = excluded.ver`
	// qDeltaSpan is a workspace's delta as a range of its records, and
	// the workspace checkpoint $2 belongs to.
	qDeltaSpan = `SELECT w.staging_base, COALESCE((SELECT MAX(ver) FROM staging_records WHERE workspace_id = w.id), 0),
		c.workspace_id FROM workspaces AS w, checkpoints AS c WHERE w.id = $1 AND c.id = $2`
	qCheckpointDelta = `SELECT body, workspace_id, base, ver FROM checkpoint_deltas WHERE checkpoint_id = $1`
	// qLiveSpan is workspace $1's delta as a range of its records.
	qLiveSpan = `SELECT w.staging_base, COALESCE((SELECT MAX(ver) FROM staging_records WHERE workspace_id = w.id), 0)
		FROM workspaces AS w WHERE w.id = $1`
	// qRecordRef reads what record $2 of workspace $1 refers to (NULLs:
	// it holds rows).
	qRecordRef           = `SELECT ref_ws, ref_base, ref_ver FROM staging_records WHERE workspace_id = $1 AND ver = $2`
	qSetCheckpointRoot   = `UPDATE checkpoints SET root = $2 WHERE id = $1`
	qUnfoldedCheckpoints = `SELECT checkpoint_id FROM checkpoint_deltas ORDER BY checkpoint_id`
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

// CopyStaged implements meta.Tx. The copy is one record of dst that
// refers to src's records of the delta (docs/decisions/028), whatever
// the delta holds; when those are a single reference (src is a fork that
// has not committed since), dst refers to the same records, so chains of
// forks do not lengthen the chain of references. src's pruning keeps the
// records while the reference lasts, and DeleteWorkspace writes them out
// into the reference first.
func (t *Tx) CopyStaged(src, dst string) error {
	op := fmt.Sprintf("copy staging rows of workspace %q to %q", src, dst)
	if err := t.exists(op, qWorkspaceExists, dst); err != nil {
		return err
	}
	var base, top int64
	if err := t.queryRow(op, false, qLiveSpan, []any{src}, &base, &top); err != nil {
		return err
	}
	if src == dst {
		return nil // the delta is its own copy
	}
	if top <= base {
		return t.rebase(dst, nil, nil)
	}
	ref := span{ws: src, base: base, ver: top}
	if top == base+1 {
		var (
			ws     sql.NullString
			rb, rv sql.NullInt64
		)
		if err := t.queryRow(op, false, qRecordRef, []any{src, top}, &ws, &rb, &rv); err != nil {
			return err
		}
		if ws.Valid {
			ref = span{ws: ws.String, base: rb.Int64, ver: rv.Int64}
		}
	}
	return t.rebase(dst, nil, &ref)
}

// SnapshotStaged implements meta.Tx. A checkpoint of the workspace itself
// refers to the records of its delta, which stay until the checkpoint is
// folded (qPruneLog): taking it writes one small row whatever the delta
// holds. Another workspace's checkpoint gets a copy.
func (t *Tx) SnapshotStaged(workspaceID, checkpointID string) error {
	op := fmt.Sprintf("copy staging rows of workspace %q to checkpoint %q", workspaceID, checkpointID)
	var (
		base, top int64
		owner     string
	)
	if err := t.queryRow(op, false, qDeltaSpan, []any{workspaceID, checkpointID}, &base, &top, &owner); err != nil {
		return err
	}
	if owner == workspaceID {
		if top <= base {
			_, err := t.exec(op, qClearCheckpointStaged, checkpointID)
			return err
		}
		_, err := t.exec(op, qRefCheckpointStaged, checkpointID, workspaceID, base, top)
		return err
	}
	rows, err := t.Staged(workspaceID)
	if err != nil {
		return err
	}
	return t.putCheckpointStaged(op, checkpointID, rows)
}

// putCheckpointStaged makes rows (ordered by key, one per key) checkpoint
// checkpointID's delta.
func (t *Tx) putCheckpointStaged(op, checkpointID string, rows []meta.Staged) error {
	if len(rows) == 0 {
		_, err := t.exec(op, qClearCheckpointStaged, checkpointID)
		return err
	}
	_, err := t.exec(op, qPutCheckpointStaged, checkpointID, meta.AppendDelta(nil, rows))
	return err
}

// CheckpointStaged implements meta.Tx.
func (t *Tx) CheckpointStaged(checkpointID string) ([]meta.Staged, error) {
	op := fmt.Sprintf("list staging rows of checkpoint %q", checkpointID)
	var (
		body      []byte
		ws        sql.NullString
		base, ver sql.NullInt64
	)
	err := t.queryRow(op, false, qCheckpointDelta, []any{checkpointID}, &body, &ws, &base, &ver)
	if errors.Is(err, errNoRow) {
		return nil, nil // folded, or taken of an empty delta
	}
	if err != nil {
		return nil, err
	}
	if ws.Valid {
		rows, err := t.records(op, qStateRows, false, ws.String, base.Int64, ver.Int64)
		if err != nil {
			return nil, err
		}
		return newestPerKey(rows), nil
	}
	var rows []meta.Staged
	err = meta.ParseDelta(body, func(r meta.Staged) error { rows = append(rows, r); return nil })
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return rows, nil
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
