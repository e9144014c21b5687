package tools

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"syscall"

	"github.com/forkspace/forkspace/audit"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/nearname"
	"github.com/forkspace/forkspace/provider"
)

// toolError is a failure already phrased for the model.
type toolError struct{ msg string }

func (e *toolError) Error() string { return e.msg }

// argError is a toolError about the call's arguments.
func argError(format string, args ...any) error {
	return &toolError{msg: fmt.Sprintf(format, args...)}
}

// describe turns any error of a tool into the text the model sees. It is
// the one place tool errors are rendered: apart from messages phrased for
// the model (toolError), an error is shown by its kind, and its text, if
// shown, never names a host path or an internal of the store.
func describe(tool string, err error) string {
	var te *toolError
	var fe *provider.FailedError
	var note string
	if errors.Is(err, audit.ErrNotRecorded) {
		note = " (the call was not recorded in the audit log)"
		if err = audit.CallError(err); err == nil {
			return tool + " made its change, but it could not be recorded in the audit log"
		}
	}
	switch {
	case errors.As(err, &te):
		return te.msg + note
	case errors.As(err, &fe):
		return fmt.Sprintf("%s failed: the workspace is unavailable: %s%s", tool, sanitize(fe.Err), note)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("%s failed: timed out%s", tool, note)
	case errors.Is(err, context.Canceled):
		return fmt.Sprintf("%s failed: canceled%s", tool, note)
	}
	return fmt.Sprintf("%s failed: %s%s", tool, sanitize(err), note)
}

// sanitize phrases an error without host paths or store internals: store
// conditions by their kind, anything else by its first line with absolute
// paths and database messages removed, cut to a bounded length.
func sanitize(err error) string {
	switch {
	case errors.Is(err, syscall.ENOSPC):
		return "the store is out of disk space; nothing more can be written until space is freed"
	case errors.Is(err, errdefs.ErrQuota):
		return "workspace quota exceeded; remove files to make room"
	case errors.Is(err, errdefs.ErrBusy):
		return "the store is busy; try again"
	case errors.Is(err, errdefs.ErrCorrupt):
		return "stored data is damaged; the store needs repair"
	case errors.Is(err, errdefs.ErrStale):
		return "the workspace changed underneath this call; try again"
	}
	return sanitizeText(err.Error())
}

// sanitizeText is sanitize for an error already turned into text (an
// audit entry's): its first line, without host paths or database
// messages, bounded; a full disk by its kind.
func sanitizeText(msg string) string {
	if strings.Contains(msg, syscall.ENOSPC.Error()) {
		return sanitize(syscall.ENOSPC)
	}
	msg, _, _ = strings.Cut(msg, "\n")
	msg = strings.ReplaceAll(msg, ": "+sql.ErrNoRows.Error(), "")
	msg = errdefs.Redact(msg)
	if len(msg) > 2*maxShown {
		msg = short(msg[:2*maxShown])
	}
	return msg
}

// fail phrases a file-operation error on p for the model; a missing path
// gets a nearest-name suggestion from its parent directory, a dangling
// symbolic link names its target.
func (c *call) fail(ctx context.Context, p string, err error) error {
	var msg string
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if target, ok := c.dangling(ctx, p); ok {
			msg = fmt.Sprintf("%s is a dangling symbolic link: its target %s does not exist", short(p), short(target))
			break
		}
		msg = "no such file or directory: " + short(p) + c.suggest(ctx, p)
	case errors.Is(err, fs.ErrExist):
		msg = "already exists: " + short(p)
	case errors.Is(err, errdefs.ErrIsDir):
		msg = short(p) + " is a directory"
	case errors.Is(err, errdefs.ErrNotDir):
		msg = "not a directory: a component of " + short(p) + " is a file"
	case errors.Is(err, errdefs.ErrNotEmpty):
		msg = "directory not empty: " + short(p) + "; pass recursive=true to remove it with everything in it"
	case errors.Is(err, errdefs.ErrReadOnly):
		msg = "read-only: " + short(p) + " cannot be changed"
	case errors.Is(err, fs.ErrPermission):
		msg = "permission denied: " + short(p)
	case errors.Is(err, errdefs.ErrQuota):
		msg = "workspace quota exceeded while changing " + short(p) + "; remove files to make room"
	case errors.Is(err, errdefs.ErrNameTooLong):
		msg = "name too long: " + short(p)
	case errors.Is(err, errdefs.ErrLoop):
		msg = "too many levels of symbolic links: " + short(p)
	default:
		return err
	}
	return &toolError{msg: msg}
}

// dangling reports whether p is a symbolic link whose target is missing,
// and the target.
func (c *call) dangling(ctx context.Context, p string) (string, bool) {
	fsys := c.ws.FS()
	rl, ok := fsys.(interface {
		Readlink(ctx context.Context, name string) (string, error)
	})
	if !ok {
		return "", false
	}
	fi, err := fsys.Lstat(ctx, p)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return "", false
	}
	target, err := rl.Readlink(ctx, p)
	return target, err == nil
}

// suggest returns "; did you mean X?" naming the existing path closest to
// p (nearname.Find), a note that p's directory does not exist, or "".
func (c *call) suggest(ctx context.Context, p string) string {
	fsys := c.ws.FS()
	if fsys == nil {
		return ""
	}
	h := nearname.Find(ctx, fsys, p)
	switch {
	case h.Near != "":
		return "; did you mean " + short(h.Near) + "?"
	case h.MissingDir != "":
		return " (directory " + short(h.MissingDir) + " does not exist)"
	}
	return ""
}
