package sqltx

import (
	"database/sql"
	"fmt"
	"io/fs"

	"github.com/forkspace/forkspace/meta"
)

const (
	qSettings      = `SELECT key, value FROM settings ORDER BY key`
	qCounters      = `SELECT name, next FROM counters ORDER BY name`
	qRaiseCounter  = `INSERT INTO counters (name, next) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET next = CASE WHEN counters.next < excluded.next THEN excluded.next ELSE counters.next END`
	qSessionRefAll = `SELECT session, name, ref, updated_at FROM session_refs ORDER BY session, name`
	qStates        = `SELECT ` + stateColumns + ` FROM audit_states WHERE workspace_id = $1 ORDER BY seq`
	qNewestSeq     = `SELECT COALESCE(MAX(seq), 0) FROM audit_states`
	// qImportState records a state whose rows are logged at $5 in an
	// epoch of their own starting at $4.
	qImportState = `INSERT INTO audit_states (seq, workspace_id, at, root, base, ver, ord)
	SELECT $1, w.id, $3, $6, $4, $5,
		COALESCE((SELECT ord FROM audit_states WHERE workspace_id = $2 ORDER BY seq DESC LIMIT 1), 0) + 1
	FROM workspaces AS w WHERE w.id = $2`
	qNewestAudit  = `SELECT COALESCE(MAX(seq), 0) FROM audit_log`
	qImportAudit  = `INSERT INTO audit_log (` + auditColumns + `) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)`
	qImportTenant = `INSERT INTO tenants (name, created_at) VALUES ($1, $2) ON CONFLICT (name) DO UPDATE SET created_at = excluded.created_at`
)

var _ meta.CopyTx = (*Tx)(nil)

// Settings implements meta.CopyTx.
func (t *Tx) Settings() (map[string]string, error) {
	out := map[string]string{}
	err := t.query("list settings", qSettings, nil, func(rows *sql.Rows) error {
		var k string
		var v []byte
		err := rows.Scan(&k, &v)
		out[k] = string(v)
		return err
	})
	return out, err
}

// Counters implements meta.CopyTx.
func (t *Tx) Counters() (map[string]int64, error) {
	out := map[string]int64{}
	err := t.query("list counters", qCounters, nil, func(rows *sql.Rows) error {
		var (
			k string
			n int64
		)
		err := rows.Scan(&k, &n)
		out[k] = n
		return err
	})
	return out, err
}

// RaiseCounter implements meta.CopyTx.
func (t *Tx) RaiseCounter(name string, next int64) error {
	_, err := t.exec(fmt.Sprintf("raise counter %q to %d", name, next), qRaiseCounter, name, next)
	return err
}

// SessionRefsAll implements meta.CopyTx.
func (t *Tx) SessionRefsAll() ([]meta.SessionRef, error) {
	var rows []meta.SessionRef
	err := t.query("list session refs", qSessionRefAll, nil, func(r *sql.Rows) error { return scanSessionRef(r, &rows) })
	return rows, err
}

// States implements meta.CopyTx.
func (t *Tx) States(workspaceID string) ([]meta.State, error) {
	var out []meta.State
	err := t.query(fmt.Sprintf("list states of workspace %q", workspaceID), qStates, []any{workspaceID}, func(rows *sql.Rows) error {
		var (
			s    meta.State
			at   int64
			root []byte
		)
		if err := rows.Scan(&s.Seq, &s.WorkspaceID, &at, &root); err != nil {
			return err
		}
		s.Time = fromNanos(at)
		var err error
		s.Root, err = scanRoot(root)
		out = append(out, s)
		return err
	})
	return out, err
}

// ImportState implements meta.CopyTx. The state's rows go to the staging
// log in an epoch of their own, and the workspace's head starts the next,
// holding its delta again: what RecordState reads for a later state is
// then only what the head holds and logs after the import.
func (t *Tx) ImportState(s meta.State, staged []meta.Staged) error {
	op := fmt.Sprintf("import state of workspace %q for audit entry %d", s.WorkspaceID, s.Seq)
	var newest int64
	if err := t.queryRow(op, false, qNewestSeq, nil, &newest); err != nil {
		return err
	}
	if s.Seq <= newest {
		return fmt.Errorf("%s: %w: a state with seq %d is recorded", op, fs.ErrInvalid, newest)
	}
	if err := t.exists(op, qWorkspaceExists, s.WorkspaceID); err != nil {
		return err
	}
	head, err := t.Staged(s.WorkspaceID)
	if err != nil {
		return err
	}
	base, err := t.nextVersion(op, s.WorkspaceID)
	if err != nil {
		return err
	}
	if len(staged) > 0 {
		if err := t.appendRecord(op, s.WorkspaceID, base+1, lastPerKey(staged)); err != nil {
			return err
		}
	}
	if err := t.execOne(op, qImportState, s.Seq, s.WorkspaceID, s.Time.UnixNano(), base, base+1, rootArg(s.Root)); err != nil {
		return err
	}
	if err := t.execOne(op, qSetStagingBase, s.WorkspaceID, base+2); err != nil {
		return err
	}
	if len(head) == 0 {
		return nil
	}
	return t.appendRecord(op, s.WorkspaceID, base+3, head) // the head's delta stays
}

// ImportCheckpointStaged implements meta.CopyTx.
func (t *Tx) ImportCheckpointStaged(checkpointID string, rows []meta.Staged) error {
	op := fmt.Sprintf("import staging rows of checkpoint %q", checkpointID)
	if err := t.exists(op, qCheckpointExists, checkpointID); err != nil {
		return err
	}
	return t.putCheckpointStaged(op, checkpointID, newestPerKey(rows))
}

// ImportAudit implements meta.CopyTx.
func (t *Tx) ImportAudit(entries []meta.AuditEntry) error {
	const op = "import audit entries"
	var last int64
	if err := t.queryRow(op, false, qNewestAudit, nil, &last); err != nil {
		return err
	}
	for _, e := range entries {
		if e.Seq <= last {
			return fmt.Errorf("%s: %w: seq %d does not follow %d", op, fs.ErrInvalid, e.Seq, last)
		}
		last = e.Seq
		changed, err := changedJSON(e.Changed)
		if err != nil {
			return fmt.Errorf("%s: %w", op, err)
		}
		if _, err := t.exec(op, qImportAudit, e.Seq, e.Time.UnixNano(), e.WorkspaceID, e.Actor, e.Session,
			e.Tool, e.ArgsDigest, e.Error, int64(e.Duration), changed, e.Checkpoint, e.Detail, e.Command); err != nil {
			return err
		}
	}
	return nil
}

// ImportTenant implements meta.CopyTx.
func (t *Tx) ImportTenant(tn meta.Tenant) error {
	op := fmt.Sprintf("import tenant %q", tn.Name)
	if tn.Name == "" {
		return fmt.Errorf("%s: %w: empty name", op, fs.ErrInvalid)
	}
	_, err := t.exec(op, qImportTenant, tn.Name, tn.CreatedAt.UnixNano())
	return err
}
