package sqltx

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"sync/atomic"
	"time"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/meta"
)

// Tx implements meta.Tx over a statement source. Its methods live beside the
// SQL of their concept (settings.go, counters.go, objects.go, workspaces.go,
// checkpoints.go, staging.go, …).
type Tx struct {
	ctx       context.Context
	src       StmtSource
	translate func(error) error
	readOnly  bool
	// barrier is the statement CollectionClock runs first ("": none).
	barrier string
	// finished is set when the View or Update function returned; a Tx
	// leaked past it must not run statements in another caller's
	// transaction.
	finished atomic.Bool
}

// New returns a transaction that runs its statements from src with ctx.
// translate adds the forkspace sentinel (fs.ErrExist, errdefs.ErrBusy, …)
// that matches a driver error in front of it. A readOnly transaction
// refuses writes with errdefs.ErrReadOnly.
func New(ctx context.Context, src StmtSource, translate func(error) error, readOnly bool) *Tx {
	return &Tx{ctx: ctx, src: src, translate: translate, readOnly: readOnly}
}

// SetBarrier makes CollectionClock run query first: for a driver whose
// Updates run side by side, a statement that waits for those in flight
// and holds back new ones until the transaction ends (meta.GCTx).
func (t *Tx) SetBarrier(query string) { t.barrier = query }

// Finish ends the transaction's use: later calls fail with fs.ErrClosed.
func (t *Tx) Finish() { t.finished.Store(true) }

// errNoRow is a read that found no row: fs.ErrNotExist alone, since the
// driver's "sql: no rows in result set" would reach users in every
// message built on it.
var errNoRow = fs.ErrNotExist

var _ meta.Tx = (*Tx)(nil)

// stmt returns the prepared statement for query, unless the transaction
// is over (fs.ErrClosed).
func (t *Tx) stmt(op, query string) (Stmt, error) {
	if t.finished.Load() {
		return nil, fmt.Errorf("%s: transaction used after its function returned: %w", op, fs.ErrClosed)
	}
	st, err := t.src.Stmt(t.ctx, query)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, err)
	}
	return st, nil
}

// exec runs a statement that changes the database.
func (t *Tx) exec(op, query string, args ...any) (sql.Result, error) {
	if t.readOnly {
		return nil, fmt.Errorf("%s: %w: view transaction", op, errdefs.ErrReadOnly)
	}
	st, err := t.stmt(op, query)
	if err != nil {
		return nil, err
	}
	res, err := st.ExecContext(t.ctx, args...)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", op, t.translate(err))
	}
	return res, nil
}

// execOne runs a statement that must change exactly one existing row;
// no row is fs.ErrNotExist.
func (t *Tx) execOne(op, query string, args ...any) error {
	res, err := t.exec(op, query, args...)
	if err != nil {
		return err
	}
	n, err := res.RowsAffected()
	if err != nil {
		return fmt.Errorf("%s: %w", op, err)
	}
	if n == 0 {
		return fmt.Errorf("%s: %w", op, errNoRow)
	}
	return nil
}

// queryRow runs a query returning at most one row and scans it into dest;
// no row is fs.ErrNotExist. write marks a statement that changes the
// database (INSERT ... RETURNING).
func (t *Tx) queryRow(op string, write bool, query string, args []any, dest ...any) error {
	if write && t.readOnly {
		return fmt.Errorf("%s: %w: view transaction", op, errdefs.ErrReadOnly)
	}
	st, err := t.stmt(op, query)
	if err != nil {
		return err
	}
	if err := st.QueryRowContext(t.ctx, args...).Scan(dest...); err != nil {
		return fmt.Errorf("%s: %w", op, t.translate(err))
	}
	return nil
}

// query runs a read-only query, calling scan for each row.
func (t *Tx) query(op, query string, args []any, scan func(*sql.Rows) error) error {
	st, err := t.stmt(op, query)
	if err != nil {
		return err
	}
	rows, err := st.QueryContext(t.ctx, args...)
	if err != nil {
		return fmt.Errorf("%s: %w", op, t.translate(err))
	}
	defer rows.Close()
	for rows.Next() {
		if err := scan(rows); err != nil {
			return fmt.Errorf("%s: %w", op, t.translate(err))
		}
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("%s: %w", op, t.translate(err))
	}
	return nil
}

// NowFunc is the SQL name of the database clock: Unix nanoseconds, never
// going back. Each driver defines it (SQLite as a Go function, PostgreSQL
// in its schema), so the queries that use it are the same for both.
const NowFunc = "forkspace_now_ns"

const nowFunc = NowFunc

// HasBytesFunc is the SQL name of a function each driver defines:
// forkspace_has_bytes(haystack, needle) is true when the BLOB haystack
// contains needle.
const HasBytesFunc = "forkspace_has_bytes"

const qNow = `SELECT ` + nowFunc + `()`

// Now implements meta.Tx.
func (t *Tx) Now() (time.Time, error) {
	var ns int64
	if err := t.queryRow("read database clock", false, qNow, nil, &ns); err != nil {
		return time.Time{}, err
	}
	return fromNanos(ns), nil
}

// CollectionClock implements meta.GCTx.
func (t *Tx) CollectionClock() (time.Time, error) {
	const op = "read collection clock"
	if t.readOnly {
		return time.Time{}, fmt.Errorf("%s: %w: view transaction", op, errdefs.ErrReadOnly)
	}
	if t.barrier != "" {
		if _, err := t.exec(op, t.barrier); err != nil {
			return time.Time{}, err
		}
	}
	return t.Now()
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

// Translator returns the translate function of a driver (see New) from
// sentinelOf, which names the forkspace sentinel matching a driver error
// (nil for none): the sentinel goes in front of the error, which stays in
// the chain; a missing row is errNoRow alone.
func Translator(sentinelOf func(error) error) func(error) error {
	return func(err error) error {
		if err == nil {
			return nil
		}
		if sentinel := sentinelOf(err); sentinel != nil && !errors.Is(err, sentinel) {
			if errors.Is(err, sql.ErrNoRows) {
				return errNoRow
			}
			return fmt.Errorf("%w: %w", sentinel, err)
		}
		return err
	}
}
