package sqltx

import (
	"cmp"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/meta"
)

const (
	qSetStagingBase = `UPDATE workspaces SET staging_base = $2 WHERE id = $1`
	// qPruneLog drops the records below the workspace's current epoch,
	// its oldest recorded state's, every checkpoint's that refers to its
	// records and every other workspace's record that does (bases grow
	// with seq). The least of them is one bound, so the delete reads only
	// the records it drops.
	qPruneLog = `DELETE FROM staging_records WHERE workspace_id = $1 AND ver <= (SELECT MIN(b) FROM (
		SELECT staging_base AS b FROM workspaces WHERE id = $1
		UNION ALL SELECT b FROM (SELECT base AS b FROM audit_states WHERE workspace_id = $1 ORDER BY seq LIMIT 1) AS oldest
		UNION ALL SELECT MIN(base) AS b FROM checkpoint_deltas WHERE workspace_id = $1
		UNION ALL SELECT MIN(ref_base) AS b FROM staging_records WHERE ref_ws = $1) AS bounds)`
	// qRecordState numbers a state after its workspace's newest (ord); its
	// version is the workspace's newest record's (or its base).
	qRecordState = `INSERT INTO audit_states (seq, workspace_id, at, root, base, ver, ord)
	SELECT $1, w.id, $3, w.root, w.staging_base,
		COALESCE((SELECT MAX(ver) FROM staging_records WHERE workspace_id = w.id), w.staging_base),
		COALESCE((SELECT ord FROM audit_states WHERE workspace_id = $2 ORDER BY seq DESC LIMIT 1), 0) + 1
	FROM workspaces AS w WHERE w.id = $2`
	stateColumns = `seq, workspace_id, at, root`
	qStateBySeq  = `SELECT ` + stateColumns + ` FROM audit_states WHERE seq = $1`
	qStateBack   = `SELECT ` + stateColumns + ` FROM audit_states WHERE workspace_id = $1 ORDER BY seq DESC LIMIT 1 OFFSET $2`
	qStateAsOf   = `SELECT ` + stateColumns + ` FROM audit_states WHERE workspace_id = $1 AND at <= $2 ORDER BY seq DESC LIMIT 1`
	qStateRange  = `SELECT workspace_id, base, ver FROM audit_states WHERE seq = $1`
	qStateRows   = `SELECT ` + recordColumns + ` FROM staging_records AS r WHERE r.workspace_id = $1 AND r.ver > $2 AND r.ver <= $3 ORDER BY r.ver`
	// The two pruning rules each delete a range of an index, so pruning
	// costs what it drops, not what the workspace keeps.
	qPruneStatesByCount = `DELETE FROM audit_states WHERE workspace_id = $1 AND ord <=
		COALESCE((SELECT ord FROM audit_states WHERE workspace_id = $1 ORDER BY seq DESC LIMIT 1), 0) - $2`
	qPruneStatesByAge = `DELETE FROM audit_states WHERE workspace_id = $1 AND at < $2`
	qStateSpans       = `SELECT root, base, ver FROM audit_states WHERE workspace_id = $1 ORDER BY seq`
	qLogRows          = `SELECT ` + recordColumns + ` FROM staging_records AS r WHERE r.workspace_id = $1 ORDER BY r.ver`
	qWorkspaceIDs     = `SELECT id FROM workspaces ORDER BY id`
)

var _ meta.HistoryTx = (*Tx)(nil)

// rebase starts a new epoch of workspace workspaceID's staging log: a new
// base, the delta that stays logged as the first record above it (rows,
// or with ref a reference to those records), and the records no state
// needs any more dropped. A missing workspace is left alone.
func (t *Tx) rebase(workspaceID string, rows []meta.Staged, ref *span) error {
	op := fmt.Sprintf("start staging epoch of workspace %q", workspaceID)
	base, err := t.nextVersion(op, workspaceID)
	if errors.Is(err, errNoRow) {
		return nil // no such workspace: nothing to log
	}
	if err != nil {
		return err
	}
	if err := t.execOne(op, qSetStagingBase, workspaceID, base); err != nil {
		return err
	}
	switch {
	case ref != nil:
		if err := t.appendRef(op, workspaceID, base+1, *ref); err != nil {
			return err
		}
	case len(rows) > 0:
		if err := t.appendRecord(op, workspaceID, base+1, rows); err != nil {
			return err
		}
	}
	_, err = t.exec(op, qPruneLog, workspaceID)
	return err
}

// RecordState implements meta.HistoryTx.
func (t *Tx) RecordState(seq int64, workspaceID string, at time.Time) error {
	return t.execOne(fmt.Sprintf("record state of workspace %q for audit entry %d", workspaceID, seq),
		qRecordState, seq, workspaceID, at.UnixNano())
}

// FindState implements meta.HistoryTx.
func (t *Tx) FindState(q meta.StateQuery) (*meta.State, error) {
	var (
		query string
		args  []any
	)
	switch {
	case q.Seq != 0:
		query, args = qStateBySeq, []any{q.Seq}
	case !q.AsOf.IsZero():
		query, args = qStateAsOf, []any{q.WorkspaceID, q.AsOf.UnixNano()}
	default:
		query, args = qStateBack, []any{q.WorkspaceID, q.Back}
	}
	var (
		s    meta.State
		at   int64
		root []byte
	)
	err := t.queryRow(fmt.Sprintf("find state %+v", q), false, query, args, &s.Seq, &s.WorkspaceID, &at, &root)
	if err != nil {
		return nil, err
	}
	s.Time = fromNanos(at)
	if s.Root, err = scanRoot(root); err != nil {
		return nil, fmt.Errorf("state of audit entry %d: %w", s.Seq, err)
	}
	return &s, nil
}

// StateStaged implements meta.HistoryTx: per key the newest log row of
// the state's epoch up to its version.
func (t *Tx) StateStaged(seq int64) ([]meta.Staged, error) {
	op := fmt.Sprintf("read staging rows of the state of audit entry %d", seq)
	var (
		ws        string
		base, ver int64
	)
	if err := t.queryRow(op, false, qStateRange, []any{seq}, &ws, &base, &ver); err != nil {
		return nil, err
	}
	rows, err := t.records(op, qStateRows, true, ws, base, ver)
	if err != nil {
		return nil, err
	}
	return newestPerKey(rows), nil
}

// PruneStates implements meta.HistoryTx.
func (t *Tx) PruneStates(workspaceID string, keep int, before time.Time) (int, error) {
	ids := []string{workspaceID}
	if workspaceID == "" {
		var err error
		if ids, err = t.workspaceIDs(); err != nil {
			return 0, err
		}
	}
	keep = max(keep, 0)
	cut := int64(math.MinInt64)
	if !before.IsZero() {
		cut = before.UnixNano()
	}
	dropped := 0
	for _, id := range ids {
		op := fmt.Sprintf("prune states of workspace %q", id)
		var n int64
		for _, q := range []struct {
			query string
			arg   any
		}{{qPruneStatesByCount, keep}, {qPruneStatesByAge, cut}} {
			res, err := t.exec(op, q.query, id, q.arg)
			if err != nil {
				return dropped, err
			}
			k, err := res.RowsAffected()
			if err != nil {
				return dropped, fmt.Errorf("%s: %w", op, err)
			}
			n += k
		}
		dropped += int(n)
		if n == 0 {
			continue
		}
		if _, err := t.exec(op, qPruneLog, id); err != nil {
			return dropped, err
		}
	}
	return dropped, nil
}

func (t *Tx) workspaceIDs() ([]string, error) {
	var ids []string
	err := t.query("list workspace ids", qWorkspaceIDs, nil, func(rows *sql.Rows) error {
		var id string
		err := rows.Scan(&id)
		ids = append(ids, id)
		return err
	})
	return ids, err
}

// HistoryRefs implements meta.HistoryTx: the distinct roots of the
// workspace's states, and the log rows some state's delta holds (a row is
// held when a state of its epoch has a version from the row's up to the
// key's next row), so that bytes every state has overwritten go.
func (t *Tx) HistoryRefs(workspaceID string) ([]cas.Hash, []meta.Staged, error) {
	op := fmt.Sprintf("read history of workspace %q", workspaceID)
	type span struct{ base, ver int64 }
	var (
		roots []cas.Hash
		spans []span
		seen  = map[cas.Hash]bool{}
	)
	err := t.query(op, qStateSpans, []any{workspaceID}, func(rows *sql.Rows) error {
		var (
			b  []byte
			sp span
		)
		if err := rows.Scan(&b, &sp.base, &sp.ver); err != nil {
			return err
		}
		h, err := scanRoot(b)
		if !seen[h] {
			seen[h] = true
			roots = append(roots, h)
		}
		spans = append(spans, sp)
		return err
	})
	if err != nil || len(spans) == 0 {
		return roots, nil, err
	}
	logged, err := t.records(op, qLogRows, true, workspaceID)
	if err != nil {
		return nil, nil, err
	}
	// held reports whether a state of an epoch containing version v sees
	// it: its ver is in [v, next) and its base below v. Bases and vers
	// grow with seq, so the first state with ver >= v has the lowest base
	// of those in range.
	held := func(v, next int64) bool {
		i, _ := slices.BinarySearchFunc(spans, v, func(sp span, v int64) int { return cmp.Compare(sp.ver, v) })
		return i < len(spans) && spans[i].ver < next && spans[i].base < v
	}
	// logged is in version order: the next row of a key is the next one
	// with that key.
	next := make([]int64, len(logged))
	after := map[string]int64{}
	for i := len(logged) - 1; i >= 0; i-- {
		k := string(logged[i].Key)
		next[i] = math.MaxInt64
		if n, ok := after[k]; ok {
			next[i] = n
		}
		after[k] = logged[i].Seq
	}
	var out []meta.Staged
	for i, r := range logged {
		if held(r.Seq, next[i]) {
			out = append(out, r)
		}
	}
	return roots, out, nil
}
