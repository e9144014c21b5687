package tools

import (
	"context"
	"errors"
	"io/fs"
	"path"
	"slices"
	"strings"

	"github.com/forkspace/forkspace/provider"
)

// errStop ends a walk early without an error.
var errStop = errors.New("stop walk")

// walk calls fn for every entry under root (not root itself), depth first
// in name order. Directories named in ignore are pruned, except when root
// itself lies inside one (the caller asked for it). fn may return
// fs.SkipDir for a directory, or errStop. Errors reading a directory other
// than root are skipped.
func walk(ctx context.Context, f provider.FS, root string, ignore []string, fn func(p string, d fs.DirEntry) error) error {
	var visit func(dir string) error
	visit = func(dir string) error {
		if err := ctx.Err(); err != nil {
			return err
		}
		entries, err := f.ReadDir(ctx, dir)
		if err != nil {
			if dir == root {
				return err
			}
			return nil
		}
		for _, e := range entries {
			p := e.Name()
			if dir != "." {
				p = dir + "/" + e.Name()
			}
			if e.IsDir() && slices.Contains(ignore, e.Name()) {
				continue
			}
			err := fn(p, e)
			switch {
			case errors.Is(err, fs.SkipDir):
				continue
			case err != nil:
				return err
			}
			if e.IsDir() {
				if err := visit(p); err != nil {
					return err
				}
			}
		}
		return nil
	}
	err := visit(root)
	if errors.Is(err, errStop) {
		return nil
	}
	return err
}

// pruned returns ignore without the names that occur as components of p
// (searching inside node_modules on purpose searches it).
func pruned(ignore []string, p string) []string {
	parts := strings.Split(path.Clean(p), "/")
	return slices.DeleteFunc(slices.Clone(ignore), func(name string) bool { return slices.Contains(parts, name) })
}
