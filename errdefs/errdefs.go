package errdefs

import (
	"errors"
	"fmt"
	"io/fs"
)

// Sentinel errors that io/fs lacks. Check them with errors.Is; path
// operations wrap them in *fs.PathError.
var (
	ErrNotEmpty    = errors.New("directory not empty")
	ErrNotDir      = errors.New("not a directory")
	ErrIsDir       = errors.New("is a directory")
	ErrReadOnly    = errors.New("read-only")
	ErrConflict    = errors.New("conflict")
	ErrCorrupt     = errors.New("corrupt data")
	ErrQuota       = errors.New("quota exceeded")
	ErrNameTooLong = errors.New("name too long")
	ErrLoop        = errors.New("too many levels of symbolic links")
	ErrBusy        = errors.New("resource busy")
	// ErrStale is an operation on a handle whose state is gone: a file
	// handle opened before its workspace was reset to another state (a
	// restore), like ESTALE on NFS.
	ErrStale = errors.New("stale file handle")
	// ErrUnauthenticated is a request without valid credentials: no
	// token, a malformed, unknown, expired or revoked one (HTTP 401). It
	// is a kind of fs.ErrPermission.
	ErrUnauthenticated = fmt.Errorf("unauthenticated: %w", fs.ErrPermission)
)

// PathError wraps err in an *fs.PathError unless it already is one.
func PathError(op, path string, err error) error {
	if err == nil {
		return nil
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return err
	}
	return &fs.PathError{Op: op, Path: path, Err: err}
}
