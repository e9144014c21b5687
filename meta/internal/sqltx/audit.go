package sqltx

import (
	"database/sql"
	"encoding/json"
	"fmt"
	"math"
	"time"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/meta"
)

const (
	auditColumns = `seq, at, workspace_id, actor, session, tool, args_digest, error, duration_ns, changed, checkpoint, detail, command`

	qAppendAudit = `INSERT INTO audit_log (` + auditColumns + `)
		VALUES ($1, COALESCE($2, ` + nowFunc + `()), $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
		RETURNING at`
	// qAudit filters with "$n = ''" / "$n = 0" guards so one prepared
	// statement serves every filter; the largest BIGINT as LIMIT means
	// none (PostgreSQL refuses a negative one).
	qAudit = `SELECT ` + auditColumns + `, EXISTS (SELECT 1 FROM audit_states AS s WHERE s.seq = audit_log.seq)
		FROM audit_log
		WHERE ($1 = '' OR workspace_id = $1)
		  AND ($2 = '' OR session = $2)
		  AND ($3 = 0 OR seq < $3)
		  AND seq > $5
		ORDER BY seq DESC LIMIT $4`
)

var _ meta.AuditTx = (*Tx)(nil)

// AppendAudit implements meta.AuditTx.
func (t *Tx) AppendAudit(e *meta.AuditEntry) error {
	op := fmt.Sprintf("append audit entry %q", e.Tool)
	changed, err := changedJSON(e.Changed)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	seq, err := t.Allocate(meta.AuditCounter, 1)
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	var at int64
	err = t.queryRow(op, true, qAppendAudit, []any{seq, toNanos(e.Time), e.WorkspaceID, e.Actor, e.Session,
		e.Tool, e.ArgsDigest, e.Error, int64(e.Duration), changed, e.Checkpoint, e.Detail, e.Command}, &at)
	if err != nil {
		return err
	}
	e.Seq, e.Time = seq, fromNanos(at)
	return nil
}

// Audit implements meta.AuditTx.
func (t *Tx) Audit(f meta.AuditFilter) ([]meta.AuditEntry, error) {
	limit := int64(f.Limit)
	if limit <= 0 {
		limit = math.MaxInt64
	}
	var es []meta.AuditEntry
	q := qAudit
	if f.Ascending {
		q = qAuditAscending
	}
	err := t.query("list audit entries", q, []any{f.WorkspaceID, f.Session, f.Before, limit, f.After},
		func(rows *sql.Rows) error {
			e, err := scanAudit(rows)
			if err == nil {
				es = append(es, e)
			}
			return err
		})
	return es, err
}

// changedJSON encodes an entry's changed paths for its column.
func changedJSON(paths []string) (string, error) {
	if paths == nil {
		return "[]", nil
	}
	b, err := json.Marshal(paths)
	return string(b), err
}

func scanAudit(rows *sql.Rows) (meta.AuditEntry, error) {
	var (
		e       meta.AuditEntry
		at, dur int64
		changed string
	)
	err := rows.Scan(&e.Seq, &at, &e.WorkspaceID, &e.Actor, &e.Session, &e.Tool, &e.ArgsDigest,
		&e.Error, &dur, &changed, &e.Checkpoint, &e.Detail, &e.Command, &e.State)
	if err != nil {
		return e, err
	}
	if err := json.Unmarshal([]byte(changed), &e.Changed); err != nil {
		return e, fmt.Errorf("decode changed paths of audit entry %d: %w: %w", e.Seq, errdefs.ErrCorrupt, err)
	}
	e.Time, e.Duration = fromNanos(at), time.Duration(dur)
	return e, nil
}
