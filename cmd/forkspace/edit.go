package main

import (
	"errors"
	"io/fs"
	"path"

	"github.com/spf13/cobra"

	"github.com/forkspace/forkspace/vfs"
)

func rmCmd(a *app) *cobra.Command {
	var recursive bool
	c := &cobra.Command{
		Use:   "rm [-r] PATH...",
		Short: "Remove files, links and (with -r) directory trees",
		Args:  args(cobra.MinimumNArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			ctx := c.Context()
			f, err := a.view(ctx)
			if err != nil {
				return err
			}
			for _, arg := range argv {
				p, err := vfs.CleanPath(arg)
				if err != nil {
					return err
				}
				if !recursive {
					err = f.Remove(ctx, p)
				} else if _, err = f.Lstat(ctx, p); err == nil {
					err = f.RemoveAll(ctx, p)
				}
				if err != nil {
					return err
				}
			}
			return nil
		},
	}
	c.Flags().BoolVarP(&recursive, "recursive", "r", false, "remove directories and their contents")
	return c
}

func mkdirCmd(a *app) *cobra.Command {
	var parents bool
	c := &cobra.Command{
		Use:   "mkdir [-p] PATH...",
		Short: "Create directories",
		Args:  args(cobra.MinimumNArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			ctx := c.Context()
			f, err := a.view(ctx)
			if err != nil {
				return err
			}
			for _, arg := range argv {
				p, err := vfs.CleanPath(arg)
				if err != nil {
					return err
				}
				if parents {
					err = f.MkdirAll(ctx, p, 0o755)
				} else {
					err = f.Mkdir(ctx, p, 0o755)
				}
				if err != nil {
					return err
				}
			}
			return nil
		},
	}
	c.Flags().BoolVarP(&parents, "parents", "p", false, "create missing parents; an existing directory is not an error")
	return c
}

func mvCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "mv SRC DST",
		Short: "Move or rename an entry (into DST when DST is a directory)",
		Args:  args(cobra.ExactArgs(2)),
		RunE: func(c *cobra.Command, argv []string) error {
			ctx := c.Context()
			f, err := a.view(ctx)
			if err != nil {
				return err
			}
			src, err := vfs.CleanPath(argv[0])
			if err != nil {
				return err
			}
			dst, err := vfs.CleanPath(argv[1])
			if err != nil {
				return err
			}
			fi, err := f.Stat(ctx, dst)
			switch {
			case err == nil && fi.IsDir():
				dst = path.Join(dst, path.Base(src))
			case err != nil && !errors.Is(err, fs.ErrNotExist):
				return err
			}
			return f.Rename(ctx, src, dst)
		},
	}
}
