package fusefs

import (
	"context"
	"errors"
	"io/fs"
	"syscall"

	"github.com/forkspace/forkspace/errdefs"
)

// errnos maps the project's error vocabulary to errno values, most
// specific first: the first sentinel errors.Is finds in an error decides.
// This table is the only place errors become errno values (go-fuse's
// ToErrno does not unwrap).
var errnos = []struct {
	err   error
	errno syscall.Errno
}{
	{errdefs.ErrStale, syscall.ESTALE},
	{errdefs.ErrQuota, syscall.EDQUOT},
	{errdefs.ErrReadOnly, syscall.EROFS},
	{errdefs.ErrNameTooLong, syscall.ENAMETOOLONG},
	{errdefs.ErrLoop, syscall.ELOOP},
	{errdefs.ErrNotEmpty, syscall.ENOTEMPTY},
	{errdefs.ErrNotDir, syscall.ENOTDIR},
	{errdefs.ErrIsDir, syscall.EISDIR},
	{errdefs.ErrBusy, syscall.EBUSY},
	{errdefs.ErrConflict, syscall.EIO},
	{errdefs.ErrCorrupt, syscall.EIO},
	{errXDev, syscall.EXDEV},
	{fs.ErrNotExist, syscall.ENOENT},
	{fs.ErrExist, syscall.EEXIST},
	{fs.ErrPermission, syscall.EPERM},
	{fs.ErrClosed, syscall.EBADF},
	{fs.ErrInvalid, syscall.EINVAL},
	{errors.ErrUnsupported, syscall.ENOTSUP},
	{context.Canceled, syscall.EINTR},
	{context.DeadlineExceeded, syscall.EINTR},
}

// errXDev is an operation on two paths in different workspaces (rename,
// link) of one mount.
var errXDev = errors.New("paths in different workspaces")

// Errno returns the errno value a mount answers for err: 0 for nil, the
// first sentinel of the table errors.Is finds, a wrapped syscall.Errno,
// else EIO.
func Errno(err error) syscall.Errno {
	e, _ := errno(err)
	return e
}

// errno is Errno, and whether err was in the vocabulary (an EIO outside
// it is logged by the caller, see ws.errno).
func errno(err error) (syscall.Errno, bool) {
	if err == nil {
		return 0, true
	}
	for _, e := range errnos {
		if errors.Is(err, e.err) {
			return e.errno, true
		}
	}
	var en syscall.Errno
	if errors.As(err, &en) {
		return en, true
	}
	return syscall.EIO, false
}
