package main

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/httpapi"
	"github.com/forkspace/forkspace/vfs"
)

func putCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "put LOCAL|- DEST",
		Short: "Copy a local file (or stdin) into the workspace",
		Long: "Copy a local file, or stdin for '-', to DEST in the workspace, streaming it. An existing\n" +
			"file is replaced; a DEST that is a directory (or ends in '/') receives LOCAL's base name.\n" +
			"The write is atomic: when it fails (quota, a read error) DEST is left as it was.",
		Args: args(cobra.ExactArgs(2)),
		RunE: func(c *cobra.Command, argv []string) error {
			ctx := c.Context()
			ws, err := a.files(ctx)
			if err != nil {
				return err
			}
			src, perm := a.stdin, fs.FileMode(0o644)
			if argv[0] != "-" {
				lf, err := os.Open(argv[0])
				if err != nil {
					return err
				}
				defer lf.Close()
				fi, err := lf.Stat()
				if err != nil {
					return err
				}
				if fi.IsDir() {
					return &fs.PathError{Op: "put", Path: argv[0], Err: fmt.Errorf("%w: use import for directories", errdefs.ErrIsDir)}
				}
				src, perm = lf, fi.Mode().Perm()
			}
			dest, err := a.putTarget(ctx, ws, argv[0], argv[1])
			if err != nil {
				return err
			}
			_, err = a.backend.Write(ctx, ws, dest, src, httpapi.WriteRequest{Perm: perm})
			return err
		},
	}
}

// putTarget resolves DEST: into a directory, LOCAL's base name is used.
func (a *app) putTarget(ctx context.Context, ws, local, dest string) (string, error) {
	p, err := vfs.CleanPath(dest)
	if err != nil {
		return "", err
	}
	intoDir := strings.HasSuffix(dest, "/") || p == "." || a.isDir(ctx, ws, p)
	if !intoDir {
		return p, nil
	}
	if local == "-" {
		return "", usage("put - %s: give a file name for stdin", dest)
	}
	return path.Join(p, filepath.Base(local)), nil
}
