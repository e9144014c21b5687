package main

import (
	"context"
	"path"

	"github.com/spf13/cobra"

	"github.com/forkspace/forkspace/vfs"
)

// eachPath calls fn for each argument with the -w state, stopping at the
// first error.
func (a *app) eachPath(ctx context.Context, argv []string, fn func(ctx context.Context, ws, p string) error) error {
	ws, err := a.files(ctx)
	if err != nil {
		return err
	}
	for _, p := range argv {
		if err := fn(ctx, ws, p); err != nil {
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
			return a.eachPath(c.Context(), argv, func(ctx context.Context, ws, p string) error {
				return a.backend.Remove(ctx, ws, p, recursive)
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
			return a.eachPath(c.Context(), argv, func(ctx context.Context, ws, p string) error {
				return a.backend.Mkdir(ctx, ws, p, parents)
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
			ws, err := a.files(ctx)
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
			if a.isDir(ctx, ws, dst) {
				dst = path.Join(dst, path.Base(src))
			}
			return a.backend.Rename(ctx, ws, src, dst)
		},
	}
}
