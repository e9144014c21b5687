package sqltx

import (
	"strconv"
	"strings"
	"time"

	"github.com/forkspace/forkspace/meta"
)

// What the change feed needs of the audit log: reading forwards and a
// retention bound (meta.AuditTx).
var (
	qAuditAscending = strings.Replace(qAudit, "ORDER BY seq DESC", "ORDER BY seq ASC", 1)

	qAuditPruneThrough = `SELECT COALESCE(MAX(seq), 0) FROM audit_log WHERE at < $1`
	qAuditPrune        = `DELETE FROM audit_log WHERE seq <= $1`
)

// PruneAudit implements meta.AuditTx.
func (t *Tx) PruneAudit(before time.Time) (int64, error) {
	const op = "prune audit log"
	var through int64
	if err := t.queryRow(op, true, qAuditPruneThrough, []any{toNanos(before)}, &through); err != nil {
		return 0, err
	}
	if through == 0 {
		return 0, nil
	}
	if _, err := t.exec(op, qAuditPrune, through); err != nil {
		return 0, err
	}
	prev, err := t.AuditPruned()
	if err != nil || prev >= through {
		return through, err
	}
	return through, t.SetSetting(meta.AuditPrunedSetting, strconv.FormatInt(through, 10))
}

// AuditPruned implements meta.AuditTx.
func (t *Tx) AuditPruned() (int64, error) { return meta.AuditPrunedMark(t) }
