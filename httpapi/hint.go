package httpapi

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/forkspace/forkspace/nearname"
	"github.com/forkspace/forkspace/vfs"
)

// hinted adds to err, when it says a path of f does not exist, the
// existing path the caller most likely meant ("; did you mean calc.py?")
// or that the path's directory is missing too; a dangling symbolic link
// is named as one, with its target. The error stays what it
// was for errors.Is and errors.As.
func hinted(ctx context.Context, f *vfs.FS, err error) error {
	var pe *fs.PathError
	if !errors.Is(err, fs.ErrNotExist) || !errors.As(err, &pe) {
		return err
	}
	if fi, lerr := f.Lstat(ctx, pe.Path); lerr == nil && fi.Mode()&fs.ModeSymlink != 0 {
		if target, rerr := f.Readlink(ctx, pe.Path); rerr == nil {
			return fmt.Errorf("%w (%s is a dangling symbolic link: its target %s does not exist)", err, pe.Path, target)
		}
	}
	h := nearname.Find(ctx, f, pe.Path)
	switch {
	case h.Near != "":
		return fmt.Errorf("%w; did you mean %s?", err, h.Near)
	case h.MissingDir != "" && h.MissingDir != pe.Path:
		return fmt.Errorf("%w (directory %s does not exist)", err, h.MissingDir)
	}
	return err
}
