package sqltx

import (
	"bytes"
	"database/sql"
	"fmt"

	"github.com/forkspace/forkspace/meta"
)

const (
	qStaged       = `SELECT key, value, deleted, seq FROM staging WHERE workspace_id = $1 ORDER BY key`
	qDeleteStaged = `DELETE FROM staging WHERE workspace_id = $1 AND seq <= $2`
	// qStagedKey drives from the workspace catalog so each workspace costs
	// one primary-key lookup of (workspace_id, key).
	qStagedKey = `SELECT w.id, s.value, s.deleted, s.seq FROM workspaces AS w
		JOIN staging AS s ON s.workspace_id = w.id AND s.key = $1 ORDER BY w.id`
)

var putStaged = newMultiRow(`INSERT INTO staging (workspace_id, key, value, deleted, seq) VALUES `, `(?, ?, ?, ?, ?)`,
	` ON CONFLICT (workspace_id, key) DO UPDATE
	SET value = excluded.value, deleted = excluded.deleted, seq = excluded.seq`)

// PutStaged implements meta.Tx. Of rows with equal keys the last wins (one
// INSERT never names a key twice, which PostgreSQL would refuse). A missing
// workspace is fs.ErrNotExist.
func (t *Tx) PutStaged(workspaceID string, rows []meta.Staged) error {
	rows = lastPerKey(rows)
	err := t.insert("put staging rows", putStaged, len(rows), func(i int, dst []any) {
		r := rows[i]
		key := r.Key
		if key == nil {
			key = []byte{}
		}
		dst[0], dst[1], dst[2], dst[3], dst[4] = workspaceID, key, r.Value, r.Deleted, r.Seq
	})
	if err == nil && len(rows) > 0 {
		err = t.logStaged(workspaceID, rows)
	}
	if err != nil {
		return fmt.Errorf("workspace %q: %w", workspaceID, err)
	}
	return nil
}

// lastPerKey drops every row that a later row with the same key replaces.
func lastPerKey(rows []meta.Staged) []meta.Staged {
	if !hasDuplicateKey(rows) {
		return rows
	}
	last := make(map[string]int, len(rows))
	for i, r := range rows {
		last[string(r.Key)] = i
	}
	out := make([]meta.Staged, 0, len(last))
	for i, r := range rows {
		if last[string(r.Key)] == i {
			out = append(out, r)
		}
	}
	return out
}

// hasDuplicateKey reports whether two rows share a key, without allocating
// for the few rows of a typical call.
func hasDuplicateKey(rows []meta.Staged) bool {
	if len(rows) > 16 {
		seen := make(map[string]struct{}, len(rows))
		for _, r := range rows {
			if _, ok := seen[string(r.Key)]; ok {
				return true
			}
			seen[string(r.Key)] = struct{}{}
		}
		return false
	}
	for i := range rows {
		for j := range i {
			if bytes.Equal(rows[i].Key, rows[j].Key) {
				return true
			}
		}
	}
	return false
}

// Staged implements meta.Tx: rows ordered by key, bytewise. An empty Value
// reads back as nil.
func (t *Tx) Staged(workspaceID string) ([]meta.Staged, error) {
	return t.stagedRows(fmt.Sprintf("list staging rows of workspace %q", workspaceID), qStaged, workspaceID)
}

// StagedKey implements meta.Tx. An empty Value reads back as nil.
func (t *Tx) StagedKey(key []byte, fn func(string, meta.Staged) error) error {
	if key == nil {
		key = []byte{}
	}
	return t.query(fmt.Sprintf("read staging rows of key %q", key), qStagedKey, []any{key}, func(rows *sql.Rows) error {
		var id string
		r := meta.Staged{Key: bytes.Clone(key)}
		if err := rows.Scan(&id, &r.Value, &r.Deleted, &r.Seq); err != nil {
			return err
		}
		if len(r.Value) == 0 {
			r.Value = nil
		}
		return fn(id, r)
	})
}

// stagedRows runs a query returning staging rows (key, value, deleted,
// seq).
func (t *Tx) stagedRows(op, query string, args ...any) ([]meta.Staged, error) {
	var out []meta.Staged
	err := t.query(op, query, args, func(rows *sql.Rows) error {
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

// DeleteStaged implements meta.Tx. It starts a new epoch of the
// workspace's staging log (history.go).
func (t *Tx) DeleteStaged(workspaceID string, maxSeq int64) error {
	_, err := t.exec(fmt.Sprintf("delete staging rows of workspace %q", workspaceID), qDeleteStaged, workspaceID, maxSeq)
	if err != nil {
		return err
	}
	return t.rebase(workspaceID)
}
