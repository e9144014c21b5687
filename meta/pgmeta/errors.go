package pgmeta

import (
	"database/sql"
	"errors"
	"io/fs"
	"syscall"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/meta/internal/sqltx"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// translate adds the forkspace sentinel that matches a PostgreSQL error in
// front of it, keeping the cause in the chain: no row is fs.ErrNotExist, a
// unique violation fs.ErrExist, a missing foreign-key parent
// fs.ErrNotExist, a write in a read-only transaction errdefs.ErrReadOnly, a
// serialization failure or deadlock errdefs.ErrBusy (Update retries those
// first), data corruption errdefs.ErrCorrupt and a full disk
// syscall.ENOSPC.
// A failure to connect is reported without its cause in the chain: on a
// unix socket that cause is ENOENT while the server restarts, which
// errors.Is would take for fs.ErrNotExist, a missing row (a process
// sharing the store forgot its open workspace as deleted).
func translate(err error) error { return translateRows(unreachable(err)) }

var translateRows = sqltx.Translator(sentinelOf)

// unreachable hides the cause of a failure to connect (see translate).
func unreachable(err error) error {
	var ce *pgconn.ConnectError
	if !errors.As(err, &ce) {
		return err
	}
	return &connectError{msg: err.Error()}
}

// connectError is a failure to reach the server, with its cause's text
// but not its chain.
type connectError struct{ msg string }

func (e *connectError) Error() string { return e.msg }

func sentinelOf(err error) error {
	if errors.Is(err, sql.ErrNoRows) || errors.Is(err, pgx.ErrNoRows) {
		return fs.ErrNotExist
	}
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return nil
	}
	switch pe.Code {
	case "23505": // unique_violation
		return fs.ErrExist
	case "23503": // foreign_key_violation
		return fs.ErrNotExist
	case "25006": // read_only_sql_transaction
		return errdefs.ErrReadOnly
	case "40001", "40P01": // serialization_failure, deadlock_detected
		return errdefs.ErrBusy
	case "XX001", "XX002": // data_corrupted, index_corrupted
		return errdefs.ErrCorrupt
	case "53100": // disk_full
		return syscall.ENOSPC
	}
	return nil
}

// retryable reports whether a transaction failed only because it ran
// beside others (serialization failure or deadlock): run again, it may
// commit.
func retryable(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && (pe.Code == "40001" || pe.Code == "40P01")
}
