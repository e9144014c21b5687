package main

import (
	"context"
	"errors"
	"io"
	"os"
	"path"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/forkspace/forkspace/httpapi"
)

func catCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "cat PATH...",
		Short: "Write files of the workspace to stdout",
		Args:  args(cobra.MinimumNArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			ctx := c.Context()
			ws, err := a.files(ctx)
			if err != nil {
				return err
			}
			for _, arg := range argv {
				if _, err := a.copyOut(ctx, ws, arg, a.stdout); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

// copyOut streams workspace file arg of state ws to w and returns its
// entry.
func (a *app) copyOut(ctx context.Context, ws, arg string, w io.Writer) (httpapi.Entry, error) {
	d, err := a.backend.Open(ctx, ws, arg, httpapi.ReadRequest{Length: -1})
	if err != nil {
		return httpapi.Entry{}, err
	}
	_, err = io.Copy(w, d)
	return d.Entry, errors.Join(err, d.Close())
}

func getCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "get PATH [LOCAL|-]",
		Short: "Copy a workspace file to a local file (default: its base name here) or stdout",
		Args:  args(cobra.RangeArgs(1, 2)),
		RunE: func(c *cobra.Command, argv []string) error {
			ctx := c.Context()
			ws, err := a.files(ctx)
			if err != nil {
				return err
			}
			local := path.Base(argv[0])
			if len(argv) == 2 {
				local = argv[1]
			}
			if local == "-" {
				_, err := a.copyOut(ctx, ws, argv[0], a.stdout)
				return err
			}
			if fi, err := os.Stat(local); err == nil && fi.IsDir() {
				local = filepath.Join(local, path.Base(argv[0]))
			}
			return a.getFile(ctx, ws, argv[0], local)
		},
	}
}

// getFile writes workspace file arg to local atomically (a temporary file
// renamed into place), with the file's permission bits.
func (a *app) getFile(ctx context.Context, ws, arg, local string) (err error) {
	tmp, err := os.CreateTemp(filepath.Dir(local), ".forkspace-get-*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			os.Remove(tmp.Name())
		}
	}()
	e, err := a.copyOut(ctx, ws, arg, tmp)
	if err != nil {
		return errors.Join(err, tmp.Close())
	}
	if err := tmp.Chmod(e.FileMode().Perm()); err != nil {
		return errors.Join(err, tmp.Close())
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), local)
}
