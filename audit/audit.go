package audit

import (
	"context"
	"errors"
	"fmt"

	"github.com/forkspace/forkspace/meta"
)

// ErrNotRecorded marks the error of a call Run could not record: the
// recording failure, joined to the call's own error if it had one.
var ErrNotRecorded = errors.New("not recorded in the audit log")

// Entry is one recorded call (the row type of meta.AuditTx).
type Entry = meta.AuditEntry

// Filter selects entries for Log.Entries.
type Filter = meta.AuditFilter

// Recorder stores audit entries. Record must be safe for concurrent use.
type Recorder interface {
	Record(ctx context.Context, e Entry) error
}

// Log is the audit log kept in a metadata store.
type Log struct {
	meta meta.Store
}

var _ Recorder = (*Log)(nil)

// NewLog returns the audit log of m.
func NewLog(m meta.Store) *Log { return &Log{meta: m} }

// Record appends e (its Seq, and Time when zero, are assigned by the
// store) and, in the same transaction, records the state of e's workspace
// as the state the call produced (see history.go).
func (l *Log) Record(ctx context.Context, e Entry) error {
	err := l.meta.Update(ctx, func(tx meta.Tx) error {
		if err := tx.AppendAudit(&e); err != nil {
			return err
		}
		return recordState(tx, &e)
	})
	if err != nil {
		return fmt.Errorf("record audit entry %s: %w", e.Tool, err)
	}
	return nil
}

// Entries returns the entries matching f, newest first.
func (l *Log) Entries(ctx context.Context, f Filter) ([]Entry, error) {
	var es []Entry
	err := l.meta.View(ctx, func(tx meta.Tx) error {
		var err error
		es, err = tx.Audit(f)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read audit log: %w", err)
	}
	return es, nil
}
