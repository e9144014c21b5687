package vfs

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"path"
)

// WriteFileFromIf is WriteFileFrom that replaces the file only if cond
// accepts the entry at name as it is when the new contents commit: cond
// gets its FileInfo (following a final symbolic link), or nil when there is
// none, and runs under the workspace's write lock in the commit's
// transaction, so no other write comes between the check and the
// replacement. An error from cond is returned in an *fs.PathError and
// nothing changes. This is compare-and-swap for whole files (HTTP If-Match
// and If-None-Match: *); the stream itself is read before the lock is
// taken, so a slow writer never holds it. (On a virtual path cond runs
// before the write instead of with it.)
func (f *FS) WriteFileFromIf(ctx context.Context, name string, r io.Reader, perm fs.FileMode, cond func(fs.FileInfo) error) (int64, error) {
	return f.writeFileFrom(ctx, name, r, perm, cond)
}

// checkCond calls cond with the entry at name in t.
func (t *txn) checkCond(ctx context.Context, name string, cond func(fs.FileInfo) error) error {
	var fi fs.FileInfo
	n, err := t.lookup(ctx, name, true)
	switch {
	case err == nil:
		a, err := t.attr(ctx, n.ino)
		if err != nil {
			return err
		}
		fi = &fileInfo{name: path.Base(name), ino: n.ino, a: a}
	case !errors.Is(err, fs.ErrNotExist):
		return err
	}
	return cond(fi)
}

// virtualCond calls cond with the virtual entry at name.
func (f *FS) virtualCond(ctx context.Context, op, name string, cond func(fs.FileInfo) error) error {
	fi, err := f.Stat(ctx, name)
	if errors.Is(err, fs.ErrNotExist) {
		fi, err = nil, nil
	}
	if err == nil {
		err = cond(fi)
	}
	if err != nil {
		var pe *fs.PathError
		if !errors.As(err, &pe) {
			err = &fs.PathError{Op: op, Path: name, Err: err}
		}
	}
	return err
}
