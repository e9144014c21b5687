package sqlitemeta

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"sync/atomic"
	"time"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/meta"
)

// tx implements meta.Tx over a statement source. Its methods live beside the
// SQL of their concept (settings.go, counters.go, objects.go, workspaces.go,
// checkpoints.go, staging.go).
type tx struct {
	ctx      context.Context
	src      stmtSource
	readOnly bool
	// finished is set when the View or Update function returned; a Tx
	// leaked past it must not run statements in another caller's batch.
	finished atomic.Bool
}

var _ meta.Tx = (*tx)(nil)

// stmt returns the prepared statement for query, unless the transaction
// is over (fs.ErrClosed).
func (t *tx) stmt(op, query string) (*sql.Stmt, error) {
	if t.finished.Load() {
		return nil, fmt.Errorf("%s: transaction used after its function returned: %w", op, fs.ErrClosed)
	}
	st, err := t.src.stmt(t.ctx, query)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return st, nil
}

// exec runs a statement that changes the database.
func (t *tx) exec(op, query string, args ...any) (sql.Result, error) {
	if t.readOnly {
		return nil, fmt.Errorf("%s: %w: view transaction", op, errdefs.ErrReadOnly)
	}
	st, err := t.stmt(op, query)
	if err != nil {
		return nil, err
	}
	res, err := st.ExecContext(t.ctx, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, translate(err))
	}
	return res, nil
}

// execOne runs a statement that must change exactly one existing row;
// no row is fs.ErrNotExist.
func (t *tx) execOne(op, query string, args ...any) error {
	res, err := t.exec(op, query, args...)
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if n == 0 {
		return fmt.Errorf("%s: %w", op, translate(sql.ErrNoRows))
	}
	return nil
}

// queryRow runs a query returning at most one row and scans it into dest;
// no row is fs.ErrNotExist. write marks a statement that changes the
// database (INSERT ... RETURNING).
func (t *tx) queryRow(op string, write bool, query string, args []any, dest ...any) error {
	if write && t.readOnly {
		return fmt.Errorf("%s: %w: view transaction", op, errdefs.ErrReadOnly)
	}
	st, err := t.stmt(op, query)
	if err != nil {
		return err
	}
	if err := st.QueryRowContext(t.ctx, args...).Scan(dest...); err != nil {
		return fmt.Errorf("%s: %w", op, translate(err))
	}
	return nil
}

// query runs a read-only query, calling scan for each row.
func (t *tx) query(op, query string, args []any, scan func(*sql.Rows) error) error {
	st, err := t.stmt(op, query)
	if err != nil {
		return err
	}
	rows, err := st.QueryContext(t.ctx, args...)
	if err != nil {
		return fmt.Errorf("%s: %w", op, translate(err))
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return fmt.Errorf("%s: %w", op, translate(err))
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("%s: %w", op, translate(err))
	}
	return nil
}

const qNow = `SELECT ` + nowFunc + `()`

// Now implements meta.Tx.
func (t *tx) Now() (time.Time, error) {
	var ns int64
	if err := t.queryRow("read database clock", false, qNow, nil, &ns); err != nil {
		return time.Time{}, err
	}
	return fromNanos(ns), nil
}

// fromNanos converts a stored timestamp.
func fromNanos(ns int64) time.Time { return time.Unix(0, ns).UTC() }

// toNanos converts a timestamp for storage; the zero time becomes NULL so
// that the query takes the database clock instead.
func toNanos(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixNano()
}
