package sqlitemeta

import (
	"database/sql"
	"errors"
	"io/fs"
	"syscall"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/meta/internal/sqltx"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// translate adds the forkspace sentinel that matches a driver error in front
// of it, keeping the cause in the chain: no row is fs.ErrNotExist, a unique
// or primary-key violation is fs.ErrExist, a missing foreign-key parent is
// fs.ErrNotExist, a damaged file is errdefs.ErrCorrupt, a lock another
// connection held past the busy timeout is errdefs.ErrBusy, and a full disk
// (SQLITE_FULL) is syscall.ENOSPC, as a failed write of a blob file is.
var translate = sqltx.Translator(sentinelOf)

func sentinelOf(err error) error {
	if errors.Is(err, sql.ErrNoRows) {
		return fs.ErrNotExist
	}
	var se *sqlite.Error
	if !errors.As(err, &se) {
		return nil
	}
	switch se.Code() {
	case sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY, sqlite3.SQLITE_CONSTRAINT_UNIQUE:
		return fs.ErrExist
	case sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY:
		return fs.ErrNotExist
	}
	switch se.Code() & 0xff {
	case sqlite3.SQLITE_CORRUPT, sqlite3.SQLITE_NOTADB:
		return errdefs.ErrCorrupt
	case sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED:
		return errdefs.ErrBusy
	case sqlite3.SQLITE_FULL:
		return syscall.ENOSPC
	}
	return nil
}
