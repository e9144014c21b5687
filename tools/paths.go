package tools

import (
	"path"
	"strings"

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
		return "", argError("path %q escapes the workspace: paths are relative to the workspace root (\"/\" is the root) and may not climb above it with ..", p)
	}
	c, err := vfs.CleanPath(p)
	if err != nil {
		return "", argError("invalid path %q: %v", p, err)
	}
	return c, nil
}

// display is how a workspace path is shown to the model.
func display(p string) string {
	if p == "." {
		return "/"
	}
	return p
}
