package tools

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"strings"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/provider"
)

// toolError is a failure already phrased for the model.
type toolError struct{ msg string }

func (e *toolError) Error() string { return e.msg }

// argError is a toolError about the call's arguments.
func argError(format string, args ...any) error {
	return &toolError{msg: fmt.Sprintf(format, args...)}
}

// describe turns any error of a tool into the text the model sees.
func describe(tool string, err error) string {
	var te *toolError
	var fe *provider.FailedError
	switch {
	case errors.As(err, &te):
		return te.msg
	case errors.As(err, &fe):
		return fmt.Sprintf("%s failed: the workspace is unavailable: %v", tool, fe.Err)
	case errors.Is(err, context.DeadlineExceeded):
		return fmt.Sprintf("%s failed: timed out", tool)
	case errors.Is(err, context.Canceled):
		return fmt.Sprintf("%s failed: canceled", tool)
	}
	return fmt.Sprintf("%s failed: %v", tool, err)
}

// fail phrases a file-operation error on p for the model; a missing path
// gets a nearest-name suggestion from its parent directory.
func (c *call) fail(ctx context.Context, p string, err error) error {
	var msg string
	switch {
	case errors.Is(err, fs.ErrNotExist):
		msg = "no such file or directory: " + p + c.suggest(ctx, p)
	case errors.Is(err, fs.ErrExist):
		msg = "already exists: " + p
	case errors.Is(err, errdefs.ErrIsDir):
		msg = p + " is a directory"
	case errors.Is(err, errdefs.ErrNotDir):
		msg = "not a directory: a component of " + p + " is a file"
	case errors.Is(err, errdefs.ErrNotEmpty):
		msg = "directory not empty: " + p + "; pass recursive=true to remove it with everything in it"
	case errors.Is(err, errdefs.ErrReadOnly):
		msg = "read-only: " + p + " cannot be changed"
	case errors.Is(err, fs.ErrPermission):
		msg = "permission denied: " + p
	case errors.Is(err, errdefs.ErrQuota):
		msg = "workspace quota exceeded while changing " + p + "; remove files to make room"
	case errors.Is(err, errdefs.ErrNameTooLong):
		msg = "name too long: " + p
	case errors.Is(err, errdefs.ErrLoop):
		msg = "too many levels of symbolic links: " + p
	default:
		return err
	}
	return &toolError{msg: msg}
}

// suggest returns "; did you mean X?" naming the entry of p's parent
// closest to p's base name, or "" if none is close. A missing parent is
// suggested for in turn.
func (c *call) suggest(ctx context.Context, p string) string {
	fsys := c.ws.FS()
	if fsys == nil || p == "." {
		return ""
	}
	dir, base := path.Split(p)
	dir = strings.TrimSuffix(dir, "/")
	if dir == "" {
		dir = "."
	}
	entries, err := fsys.ReadDir(ctx, dir)
	if errors.Is(err, fs.ErrNotExist) {
		if s := c.suggest(ctx, dir); s != "" {
			return s
		}
		return " (directory " + dir + " does not exist)"
	}
	if err != nil {
		return ""
	}
	best, bestDist := "", len(base)/3+2
	for _, e := range entries {
		if d := distance(strings.ToLower(base), strings.ToLower(e.Name())); d < bestDist {
			best, bestDist = e.Name(), d
		}
	}
	if best == "" {
		return ""
	}
	return "; did you mean " + path.Join(dir, best) + "?"
}

// distance is the Levenshtein distance of a and b (bytes).
func distance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
