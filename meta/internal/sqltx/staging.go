package sqltx

import (
	"bytes"
	"database/sql"
	"fmt"
	"slices"

	"github.com/forkspace/forkspace/meta"
)

// A workspace's staging delta is an append-only log of records in
// staging_records (docs/decisions/025): each PutStaged appends one record,
// the rows of one commit encoded with meta.AppendDelta, under the
// workspace's next version. The records above the workspace's staging_base
// are its delta (per key the newest row wins); those at or below it are
// history that recorded states still read (history.go). A commit therefore
// writes one row, where a row per key cost a page or more per key.

const (
	// nextVer and ofWorkspace compute the version after every record of
	// workspace $1 and its base.
	nextVer     = `CASE WHEN top > base THEN top ELSE base END + 1`
	ofWorkspace = ` FROM (SELECT w.staging_base AS base,
		COALESCE((SELECT MAX(ver) FROM staging_records WHERE workspace_id = w.id), 0) AS top
		FROM workspaces AS w WHERE w.id = $1) AS v`
	qNextVer = `SELECT ` + nextVer + ofWorkspace
	// qAppendRecord appends record $2 under the next version; no row
	// inserted means no such workspace.
	qAppendRecord = `INSERT INTO staging_records (workspace_id, ver, body) SELECT $1, ` + nextVer + `, $2` + ofWorkspace
	qPutRecord    = `INSERT INTO staging_records (workspace_id, ver, body) VALUES ($1, $2, $3)`
	// qDelta reads the records of the workspace's delta in order.
	qDelta = `SELECT r.ver, r.body FROM staging_records AS r JOIN workspaces AS w ON w.id = r.workspace_id
		WHERE r.workspace_id = $1 AND r.ver > w.staging_base ORDER BY r.ver`
	// qNewestHolding reads, per workspace, the newest record of its delta
	// whose bytes contain $1: walking each workspace's records newest
	// first, it usually stops at the first.
	qNewestHolding = `SELECT w.id, r.body FROM workspaces AS w JOIN staging_records AS r ON r.workspace_id = w.id
		AND r.ver = (SELECT x.ver FROM staging_records AS x WHERE x.workspace_id = w.id AND x.ver > w.staging_base
			AND ` + HasBytesFunc + `(x.body, $1) ORDER BY x.ver DESC LIMIT 1)
		ORDER BY w.id`
)

// nextVersion returns the version workspace workspaceID's next record takes;
// a missing workspace is fs.ErrNotExist.
func (t *Tx) nextVersion(op, workspaceID string) (int64, error) {
	var ver int64
	err := t.queryRow(op, true, qNextVer, []any{workspaceID}, &ver)
	return ver, err
}

// appendRecord logs rows as workspace workspaceID's record ver.
func (t *Tx) appendRecord(op, workspaceID string, ver int64, rows []meta.Staged) error {
	_, err := t.exec(op, qPutRecord, workspaceID, ver, meta.AppendDelta(nil, rows))
	return err
}

// PutStaged implements meta.Tx: one record holding rows. Of rows with equal
// keys the last wins. A missing workspace is fs.ErrNotExist.
func (t *Tx) PutStaged(workspaceID string, rows []meta.Staged) error {
	if len(rows) == 0 {
		return nil
	}
	op := fmt.Sprintf("put staging rows of workspace %q", workspaceID)
	return t.execOne(op, qAppendRecord, workspaceID, meta.AppendDelta(nil, lastPerKey(rows)))
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

// newestPerKey keeps, of rows in log order, the last row of each key,
// ordered by key.
func newestPerKey(rows []meta.Staged) []meta.Staged {
	if increasing(rows) {
		return rows // one record in key order: a fork's, a fold's
	}
	out := lastPerKey(rows)
	slices.SortFunc(out, func(a, b meta.Staged) int { return bytes.Compare(a.Key, b.Key) })
	return out
}

// increasing reports whether each row's key is above the one before.
func increasing(rows []meta.Staged) bool {
	for i := 1; i < len(rows); i++ {
		if bytes.Compare(rows[i-1].Key, rows[i].Key) >= 0 {
			return false
		}
	}
	return true
}

// records runs a query returning (ver, rows) records and returns their
// rows in order. Each row's Seq is its own, or with verAsSeq the version
// of its record (what history reads order by).
func (t *Tx) records(op, query string, verAsSeq bool, args ...any) (out []meta.Staged, err error) {
	err = t.query(op, query, args, func(rows *sql.Rows) error {
		var (
			ver  int64
			body []byte
		)
		if err := rows.Scan(&ver, &body); err != nil {
			return err
		}
		return meta.ParseDelta(body, func(r meta.Staged) error {
			if verAsSeq {
				r.Seq = ver
			}
			out = append(out, r)
			return nil
		})
	})
	return out, err
}

// Staged implements meta.Tx: rows ordered by key, bytewise. An empty Value
// reads back as nil.
func (t *Tx) Staged(workspaceID string) ([]meta.Staged, error) {
	rows, err := t.records(fmt.Sprintf("list staging rows of workspace %q", workspaceID), qDelta, false, workspaceID)
	if err != nil {
		return nil, err
	}
	return newestPerKey(rows), nil
}

// StagedKey implements meta.Tx: per workspace, the newest record holding
// key decides (every commit rewrites the usage record, the key the
// catalog asks for, so that is most often the newest). A record whose
// bytes contain the key elsewhere sends that workspace to its whole
// delta. An empty Value reads back as nil.
func (t *Tx) StagedKey(key []byte, fn func(string, meta.Staged) error) error {
	if key == nil {
		key = []byte{}
	}
	type found struct {
		id  string
		row meta.Staged
		ok  bool
	}
	var hits []found
	err := t.query(fmt.Sprintf("read staging rows of key %q", key), qNewestHolding, []any{key}, func(rows *sql.Rows) error {
		var (
			f    found
			body []byte
		)
		if err := rows.Scan(&f.id, &body); err != nil {
			return err
		}
		err := meta.ParseDelta(body, func(r meta.Staged) error {
			if bytes.Equal(r.Key, key) {
				f.row, f.ok = r, true
			}
			return nil
		})
		hits = append(hits, f)
		return err
	})
	if err != nil {
		return err
	}
	for _, f := range hits {
		if !f.ok {
			delta, err := t.Staged(f.id)
			if err != nil {
				return err
			}
			i, ok := slices.BinarySearchFunc(delta, key, func(r meta.Staged, k []byte) int { return bytes.Compare(r.Key, k) })
			if !ok {
				continue
			}
			f.row = delta[i]
		}
		if err := fn(f.id, f.row); err != nil {
			return err
		}
	}
	return nil
}

// DeleteStaged implements meta.Tx. It starts a new epoch of the
// workspace's staging log holding the rows the fold did not apply.
func (t *Tx) DeleteStaged(workspaceID string, maxSeq int64) error {
	rows, err := t.Staged(workspaceID)
	if err != nil {
		return err
	}
	rows = slices.DeleteFunc(rows, func(r meta.Staged) bool { return r.Seq <= maxSeq })
	return t.rebase(workspaceID, rows)
}
