package vfs

import (
	"fmt"
	"io/fs"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/forkspace/forkspace/errdefs"
)

// Limits on names and paths.
const (
	// MaxNameLen is the longest path component, in bytes.
	MaxNameLen = 255
	// MaxPathLen is the longest path, in bytes.
	MaxPathLen = 4096
)

// checkPath validates an io/fs-style path ("." or slash-separated names
// without ".", ".." or empty elements, valid UTF-8 as fs.ValidPath demands)
// and returns the cause of rejection, or nil. Causes wrap fs.ErrInvalid or errdefs.ErrNameTooLong.
func checkPath(p string) error {
	if len(p) > MaxPathLen {
		return fmt.Errorf("%w: path longer than %d bytes", errdefs.ErrNameTooLong, MaxPathLen)
	}
	if strings.IndexByte(p, 0) >= 0 {
		return fmt.Errorf("%w: NUL byte in path", fs.ErrInvalid)
	}
	if !utf8.ValidString(p) {
		return fmt.Errorf("%w: path is not valid UTF-8", fs.ErrInvalid)
	}
	if p == "." {
		return nil
	}
	if p == "" {
		return fmt.Errorf("%w: empty path", fs.ErrInvalid)
	}
	if p[0] == '/' {
		return fmt.Errorf("%w: absolute path not allowed", fs.ErrInvalid)
	}
	for elem := range strings.SplitSeq(p, "/") {
		switch elem {
		case "":
			return fmt.Errorf("%w: empty path element", fs.ErrInvalid)
		case ".":
			return fmt.Errorf("%w: %q element not allowed", fs.ErrInvalid, ".")
		case "..":
			return fmt.Errorf("%w: path escapes workspace", fs.ErrInvalid)
		}
		if len(elem) > MaxNameLen {
			return fmt.Errorf("%w: name longer than %d bytes", errdefs.ErrNameTooLong, MaxNameLen)
		}
	}
	return nil
}

// validPath returns a *fs.PathError for op when p is not a valid path.
func validPath(op, p string) error {
	if err := checkPath(p); err != nil {
		return &fs.PathError{Op: op, Path: shownPath(p), Err: err}
	}
	return nil
}

// maxShownPath bounds the bytes of a rejected path its error shows.
const maxShownPath = 200

// shownPath is p as an error rejecting it names it: a path past
// MaxPathLen (a 12,000-byte one made a 12,000-byte message) is cut, with
// its length.
func shownPath(p string) string {
	if len(p) <= MaxPathLen {
		return p
	}
	cut := maxShownPath
	for cut > 0 && !utf8.RuneStart(p[cut]) {
		cut--
	}
	return fmt.Sprintf("%s… (%d bytes)", p[:cut], len(p))
}

// CleanPath turns a path given at an edge (CLI, tools) into the io/fs form
// used by FS: "/a/b", "a/./b/../c" and "a//b/" are cleaned lexically relative
// to the workspace root ("/" and "" mean "."). A ".." that would leave the
// root is rejected rather than clamped, so a caller never silently reads a
// different file than it named. Errors are *fs.PathError wrapping
// fs.ErrInvalid or errdefs.ErrNameTooLong.
func CleanPath(p string) (string, error) {
	const op = "clean"
	if strings.IndexByte(p, 0) >= 0 {
		return "", &fs.PathError{Op: op, Path: shownPath(p), Err: fmt.Errorf("%w: NUL byte in path", fs.ErrInvalid)}
	}
	c := path.Clean("/" + p)
	// path.Clean of a rooted path drops leading "..", so detect escapes on
	// the unrooted form.
	if u := path.Clean(strings.TrimLeft(p, "/")); u == ".." || strings.HasPrefix(u, "../") {
		return "", &fs.PathError{Op: op, Path: shownPath(p), Err: fmt.Errorf("%w: path escapes workspace", fs.ErrInvalid)}
	}
	c = strings.TrimPrefix(c, "/")
	if c == "" {
		c = "."
	}
	if err := validPath(op, c); err != nil {
		return "", err
	}
	return c, nil
}

// splitPath returns the elements of a valid path ("." has none).
func splitPath(p string) []string {
	if p == "." {
		return nil
	}
	return strings.Split(p, "/")
}

// pathIn is the path of name (a valid path) in directory dir (a valid
// path, "." for the root).
func pathIn(dir, name string) string {
	if dir == "." {
		return name
	}
	return dir + "/" + name
}
