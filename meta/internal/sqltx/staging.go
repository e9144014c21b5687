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
//
// A fork's first record may instead refer to a range of its parent's
// records (docs/decisions/028): (ref_ws, ref_base, ref_ver) and an empty
// delta for body, read as the newest row per key of that range. Every
// read of records goes through records, which reads such a reference in
// place.

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
	// qPutRef writes record $2 of workspace $1 as a reference to the
	// records ($4, $5] of workspace $3.
	qPutRef = `INSERT INTO staging_records (workspace_id, ver, body, ref_ws, ref_base, ref_ver) VALUES ($1, $2, $3, $4, $5, $6)`
	// recordColumns are what records reads of a record.
	recordColumns = `r.ver, r.body, r.ref_ws, r.ref_base, r.ref_ver`
	// qDelta reads the records of the workspace's delta in order.
	qDelta = `SELECT ` + recordColumns + ` FROM staging_records AS r JOIN workspaces AS w ON w.id = r.workspace_id
		WHERE r.workspace_id = $1 AND r.ver > w.staging_base ORDER BY r.ver`
	// qNewestHolding reads, per workspace, the newest record of its delta
	// whose bytes contain $1 or that refers to other records: walking
	// each workspace's records newest first, it usually stops at the
	// first.
	qNewestHolding = `SELECT w.id, ` + recordColumns + ` FROM workspaces AS w JOIN staging_records AS r ON r.workspace_id = w.id
		AND r.ver = (SELECT x.ver FROM staging_records AS x WHERE x.workspace_id = w.id AND x.ver > w.staging_base
			AND (` + HasBytesFunc + `(x.body, $1) OR x.ref_ws IS NOT NULL) ORDER BY x.ver DESC LIMIT 1)
		ORDER BY w.id`
	// qNewestHoldingIn is qNewestHolding within the records ($2, $3] of
	// workspace $1: the newest such record below $3.
	qNewestHoldingIn = `SELECT ` + recordColumns + ` FROM staging_records AS r WHERE r.workspace_id = $1 AND r.ver > $2 AND r.ver <= $3
		AND (` + HasBytesFunc + `(r.body, $4) OR r.ref_ws IS NOT NULL) ORDER BY r.ver DESC LIMIT 1`
)

// span is a range (base, ver] of workspace ws's records: a recorded
// state's, a checkpoint's, or what a reference record refers to.
type span struct {
	ws        string
	base, ver int64
}

// record is one row of staging_records: a commit's rows encoded (body),
// or, when ref is set, a reference to the records of another workspace.
type record struct {
	ver  int64
	body []byte
	ref  *span
}

// scanRecord reads the recordColumns of one row.
func scanRecord(rows *sql.Rows, dest ...any) (record, error) {
	var (
		rec       record
		refWS     sql.NullString
		base, ver sql.NullInt64
	)
	if err := rows.Scan(append(dest, &rec.ver, &rec.body, &refWS, &base, &ver)...); err != nil {
		return rec, err
	}
	if refWS.Valid {
		rec.ref = &span{ws: refWS.String, base: base.Int64, ver: ver.Int64}
	}
	return rec, nil
}

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

// appendRef logs workspace workspaceID's record ver as a reference to the
// records of ref. Its body is an empty delta, so a reader that knows no
// references reads no rows there instead of failing.
func (t *Tx) appendRef(op, workspaceID string, ver int64, ref span) error {
	_, err := t.exec(op, qPutRef, workspaceID, ver, meta.AppendDelta(nil, nil), ref.ws, ref.base, ref.ver)
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

// records runs a query returning records (recordColumns) and returns
// their rows in order, a reference record's being the newest row per key
// of the range it refers to. Each row's Seq is its own, or with verAsSeq
// the version of its record (what history reads order by). The records
// are read before any reference is followed: a driver may not run a
// query while another's rows are open.
func (t *Tx) records(op, query string, verAsSeq bool, args ...any) (out []meta.Staged, err error) {
	var recs []record
	err = t.query(op, query, args, func(rows *sql.Rows) error {
		rec, err := scanRecord(rows)
		recs = append(recs, rec)
		return err
	})
	if err != nil {
		return nil, err
	}
	for _, rec := range recs {
		err := t.recordRows(op, rec, func(r meta.Staged) error {
			if verAsSeq {
				r.Seq = rec.ver
			}
			out = append(out, r)
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// recordRows calls fn with the rows of rec in order: its own, or those of
// the range it refers to, newest per key in key order (references chain
// when the parent was a fork too; each refers to older records, so the
// chain ends).
func (t *Tx) recordRows(op string, rec record, fn func(meta.Staged) error) error {
	if rec.ref == nil {
		if err := meta.ParseDelta(rec.body, fn); err != nil {
			return fmt.Errorf("%s: record %d: %w", op, rec.ver, err)
		}
		return nil
	}
	rows, err := t.spanRows(op, *rec.ref)
	if err != nil {
		return err
	}
	for _, r := range rows {
		if err := fn(r); err != nil {
			return err
		}
	}
	return nil
}

// spanRows returns the newest row per key of the records of sp, ordered by
// key.
func (t *Tx) spanRows(op string, sp span) ([]meta.Staged, error) {
	rows, err := t.records(op, qStateRows, false, sp.ws, sp.base, sp.ver)
	if err != nil {
		return nil, err
	}
	return newestPerKey(rows), nil
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
// catalog asks for, so that is most often the newest); a reference record
// is searched the same way, newest record first. A record whose bytes
// contain the key elsewhere sends that workspace to its whole delta. An
// empty Value reads back as nil.
func (t *Tx) StagedKey(key []byte, fn func(string, meta.Staged) error) error {
	if key == nil {
		key = []byte{}
	}
	op := fmt.Sprintf("read staging rows of key %q", key)
	type found struct {
		id  string
		rec record
	}
	var hits []found
	err := t.query(op, qNewestHolding, []any{key}, func(rows *sql.Rows) error {
		var f found
		var err error
		f.rec, err = scanRecord(rows, &f.id)
		hits = append(hits, f)
		return err
	})
	if err != nil {
		return err
	}
	for _, f := range hits {
		row, ok, err := t.keyIn(op, f.rec, key)
		if err != nil {
			return err
		}
		if !ok {
			delta, err := t.Staged(f.id)
			if err != nil {
				return err
			}
			i, ok := slices.BinarySearchFunc(delta, key, func(r meta.Staged, k []byte) int { return bytes.Compare(r.Key, k) })
			if !ok {
				continue
			}
			row = delta[i]
		}
		if err := fn(f.id, row); err != nil {
			return err
		}
	}
	return nil
}

// keyIn returns key's row in record rec, if it holds one; for a reference
// record, the row of the newest record of its range holding key, found as
// StagedKey finds it (ok false when none does).
func (t *Tx) keyIn(op string, rec record, key []byte) (row meta.Staged, ok bool, err error) {
	if rec.ref == nil {
		err = meta.ParseDelta(rec.body, func(r meta.Staged) error {
			if bytes.Equal(r.Key, key) {
				row, ok = r, true
			}
			return nil
		})
		return row, ok, err
	}
	sp := *rec.ref
	for {
		var (
			next record
			got  bool
		)
		err := t.query(op, qNewestHoldingIn, []any{sp.ws, sp.base, sp.ver, key}, func(rows *sql.Rows) (err error) {
			next, err = scanRecord(rows)
			got = true
			return err
		})
		if err != nil || !got {
			return row, false, err
		}
		if row, ok, err = t.keyIn(op, next, key); ok || err != nil {
			return row, ok, err
		}
		sp.ver = next.ver - 1 // the key's bytes were elsewhere: look further back
	}
}

// DeleteStaged implements meta.Tx. It starts a new epoch of the
// workspace's staging log holding the rows the fold did not apply.
func (t *Tx) DeleteStaged(workspaceID string, maxSeq int64) error {
	rows, err := t.Staged(workspaceID)
	if err != nil {
		return err
	}
	rows = slices.DeleteFunc(rows, func(r meta.Staged) bool { return r.Seq <= maxSeq })
	return t.rebase(workspaceID, rows, nil)
}
