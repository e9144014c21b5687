package main

import (
	"errors"
	"fmt"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/forkspace/forkspace/errdefs"
)

func initCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "init",
		Short: "Create the store (idempotent)",
		Long:  "Create the store directory (--store) with its metadata database and blob directory. Running it on an existing store is a no-op.",
		Args:  args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			// A store a server holds exists: nothing to do.
			if _, err := a.open(c.Context(), true); err != nil && !(errors.Is(err, errdefs.ErrBusy) && a.served()) {
				return err
			}
			dir, err := filepath.Abs(a.storeDir)
			if err != nil {
				return err
			}
			if a.json {
				return a.printJSON(map[string]string{"store": dir})
			}
			_, err = fmt.Fprintf(a.stdout, "store ready at %s\n", dir)
			return err
		},
	}
}
