package main

import (
	"context"
	"errors"
	"io"
	"os"
	"path"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/forkspace/forkspace/vfs"
)

func catCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "cat PATH...",
		Short: "Write files of the workspace to stdout",
		Args:  args(cobra.MinimumNArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			ctx := c.Context()
			f, err := a.view(ctx)
			if err != nil {
				return err
			}
			for _, arg := range argv {
				if err := copyOut(ctx, f, arg, a.stdout); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

// copyOut streams workspace file arg to w.
func copyOut(ctx context.Context, f *vfs.FS, arg string, w io.Writer) error {
	p, err := vfs.CleanPath(arg)
	if err != nil {
		return err
	}
	h, err := f.Open(ctx, p)
	if err != nil {
		return err
	}
	_, err = io.Copy(w, h)
	return errors.Join(err, h.Close())
}

func getCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "get PATH [LOCAL|-]",
		Short: "Copy a workspace file to a local file (default: its base name here) or stdout",
		Args:  args(cobra.RangeArgs(1, 2)),
		RunE: func(c *cobra.Command, argv []string) error {
			ctx := c.Context()
			f, err := a.view(ctx)
			if err != nil {
				return err
			}
			local := path.Base(argv[0])
			if len(argv) == 2 {
				local = argv[1]
			}
			if local == "-" {
				return copyOut(ctx, f, argv[0], a.stdout)
			}
			if fi, err := os.Stat(local); err == nil && fi.IsDir() {
				local = filepath.Join(local, path.Base(argv[0]))
			}
			return getFile(ctx, f, argv[0], local)
		},
	}
}

// getFile writes workspace file arg to local atomically (a temporary file
// renamed into place), with the file's permission bits.
func getFile(ctx context.Context, f *vfs.FS, arg, local string) (err error) {
	p, err := vfs.CleanPath(arg)
	if err != nil {
		return err
	}
	fi, err := f.Stat(ctx, p)
	if err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(local), ".forkspace-get-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.Remove(tmp.Name())
		}
	}()
	if err := copyOut(ctx, f, p, tmp); err != nil {
		return errors.Join(err, tmp.Close())
	}
	if err := tmp.Chmod(fi.Mode().Perm()); err != nil {
		return errors.Join(err, tmp.Close())
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), local)
}
