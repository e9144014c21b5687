package main

import (
	"context"
	"errors"
	"io/fs"
	"path"

	"github.com/spf13/cobra"

	"github.com/forkspace/forkspace/vfs"
)

// eachPath opens the selected workspace view and calls fn for each
// argument as a cleaned workspace path, stopping at the first error.
func (a *app) eachPath(ctx context.Context, argv []string, fn func(ctx context.Context, f *vfs.FS, p string) error) error {
	f, err := a.view(ctx)
	if err != nil {
		return err
	}
	for _, arg := range argv {
		p, err := vfs.CleanPath(arg)
		if err != nil {
			return err
		}
		if err := fn(ctx, f, p); err != nil {
			return err
		}
	}
	return nil
}

func rmCmd(a *app) *cobra.Command {
	var recursive bool
	c := &cobra.Command{
		Use:   "rm [-r] PATH...",
		Short: "Remove files, links and (with -r) directory trees",
		Args:  args(cobra.MinimumNArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			return a.eachPath(c.Context(), argv, func(ctx context.Context, f *vfs.FS, p string) error {
				if !recursive {
					return f.Remove(ctx, p)
				}
				if _, err := f.Lstat(ctx, p); err != nil {
					return err
				}
				return f.RemoveAll(ctx, p)
			})
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
			return a.eachPath(c.Context(), argv, func(ctx context.Context, f *vfs.FS, p string) error {
				if parents {
					return f.MkdirAll(ctx, p, 0o755)
				}
				return f.Mkdir(ctx, p, 0o755)
			})
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
