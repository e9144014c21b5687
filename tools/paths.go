package tools

import (
	"errors"
	"io/fs"
	"path"
	"strings"
	"unicode/utf8"

	"github.com/forkspace/forkspace/vfs"
)

// clean turns a model-given path into a workspace path ("." is the root):
// a leading "/" means the workspace root, "" means the root, and ".."
// escaping the root is a tool error.
func clean(p string) (string, error) {
	if strings.TrimSpace(p) == "" {
		return ".", nil
	}
	if u := path.Clean(strings.TrimLeft(p, "/")); u == ".." || strings.HasPrefix(u, "../") {
		return "", argError("path %q escapes the workspace: paths are relative to the workspace root (\"/\" is the root) and may not climb above it with ..", short(p))
	}
	c, err := vfs.CleanPath(p)
	if err != nil {
		var pe *fs.PathError
		if errors.As(err, &pe) {
			err = pe.Err // the path is named once, shortened
		}
		return "", argError("invalid path %q: %v", short(p), err)
	}
	return c, nil
}

// maxShown is how many bytes of a path a message shows.
const maxShown = 200

// short returns p cut to maxShown bytes (on a rune boundary) with "…"
// when it is longer, so an over-long path cannot flood a message.
func short(p string) string {
	if len(p) <= maxShown {
		return p
	}
	cut := maxShown
	for cut > 0 && !utf8.RuneStart(p[cut]) {
		cut--
	}
	return p[:cut] + "…"
}

// display is how a workspace path is shown to the model.
func display(p string) string {
	if p == "." {
		return "/"
	}
	return short(p)
}
