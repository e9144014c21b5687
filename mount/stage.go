package mount

import (
	"context"
	"fmt"
	"io/fs"

	"github.com/forkspace/forkspace/vfs"
)

// Stage copies the subtree at from to to in the same workspace (parents
// created): directories, files (a stub is hydrated first, a virtual file
// read live) and symbolic links. The copies are ordinary workspace files:
// they are not under the source mount, so they are never written back
// (unless to lies under a read-write mount, whose rules then apply, as a
// read-only mount's refuse them). Staging skill bundles is two calls:
// Stage(ctx, f, "mnt/skills/x", ".agents/skills/x") and
// Stage(ctx, f, "mnt/skills/x", ".claude/skills/x"). An existing file at
// a destination path is replaced; on error what was copied stays.
//
// from and to are cleaned like every edge path (vfs.CleanPath: "/a",
// "./a" and "a/" are "a"). Staging a tree into itself or below itself is
// fs.ErrInvalid, like cp -r a a/b, and copies nothing.
func Stage(ctx context.Context, f *vfs.FS, from, to string) error {
	src, dst, err := stagePaths(from, to)
	if err != nil {
		return err
	}
	from, to = src, dst
	fsys := f.IOFS(ctx)
	err = fs.WalkDir(fsys, from, func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		dst := to + p[len(from):]
		info, err := de.Info()
		if err != nil {
			return err
		}
		switch {
		case de.IsDir():
			return f.MkdirAll(ctx, dst, info.Mode().Perm()|0o700)
		case de.Type()&fs.ModeSymlink != 0:
			target, err := f.Readlink(ctx, p)
			if err != nil {
				return err
			}
			if err := f.Remove(ctx, dst); err != nil && !isNotExist(err) {
				return err
			}
			return f.Symlink(ctx, target, dst)
		}
		data, err := f.ReadFile(ctx, p)
		if err != nil {
			return err
		}
		return f.WriteFile(ctx, dst, data, info.Mode().Perm())
	})
	if err != nil {
		return fmt.Errorf("stage %s to %s: %w", from, to, err)
	}
	return nil
}

// stagePaths cleans Stage's paths and refuses a destination inside the
// source.
func stagePaths(from, to string) (string, string, error) {
	src, err := vfs.CleanPath(from)
	if err != nil {
		return "", "", fmt.Errorf("stage %s to %s: %w", from, to, err)
	}
	dst, err := vfs.CleanPath(to)
	if err != nil {
		return "", "", fmt.Errorf("stage %s to %s: %w", from, to, err)
	}
	if src == "." || inMount(src, dst) {
		return "", "", fmt.Errorf("stage %s to %s: %w: cannot copy a directory into itself", from, to, fs.ErrInvalid)
	}
	return src, dst, nil
}
