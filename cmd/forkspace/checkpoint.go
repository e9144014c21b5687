package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/forkspace/forkspace/httpapi"
)

func checkpointCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "checkpoint [LABEL]",
		Short: "Record the workspace's current state (constant time)",
		Args:  args(cobra.MaximumNArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			ws, err := a.files(c.Context())
			if err != nil {
				return err
			}
			label := ""
			if len(argv) == 1 {
				label = argv[0]
			}
			cp, err := a.backend.Checkpoint(c.Context(), ws, label)
			if err != nil {
				return err
			}
			if a.json {
				return a.printJSON(cp)
			}
			_, err = fmt.Fprintln(a.stdout, cp.ID)
			return err
		},
	}
}

func checkpointsCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "checkpoints",
		Short: "List the workspace's checkpoints, oldest first",
		Args:  args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			ws, err := a.files(c.Context())
			if err != nil {
				return err
			}
			cps, err := a.backend.Checkpoints(c.Context(), ws)
			if err != nil {
				return err
			}
			if a.json {
				return a.printJSON(cps)
			}
			tw := table(a.stdout)
			fmt.Fprintln(tw, "ID\tLABEL\tCREATED")
			for _, cp := range cps {
				fmt.Fprintf(tw, "%s\t%s\t%s\n", cp.ID, cp.Label, when(cp.CreatedAt))
			}
			return tw.Flush()
		},
	}
}

func restoreCmd(a *app) *cobra.Command {
	var paths []string
	c := &cobra.Command{
		Use:   "restore CHECKPOINT",
		Short: "Point the workspace back at a checkpoint (ID or label), discarding later changes",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			if len(paths) > 0 {
				ws, err := a.into(c.Context(), "")
				if err != nil {
					return err
				}
				r, err := a.backend.RestorePaths(c.Context(), ws, httpapi.RestorePathsRequest{Checkpoint: argv[0], Paths: paths})
				return a.printMerge("restored", r, err)
			}
			ws, err := a.files(c.Context())
			if err != nil {
				return err
			}
			if err := a.backend.Restore(c.Context(), ws, argv[0]); err != nil {
				return err
			}
			if a.json {
				return a.printJSON(httpapi.RestoreResult{Workspace: ws, Checkpoint: argv[0]})
			}
			_, err = fmt.Fprintf(a.stdout, "restored %s to %s\n", ws, argv[0])
			return err
		},
	}
	c.Flags().StringArrayVar(&paths, "path", nil, "restore only this path (repeatable); a checkpoint of the state before is taken")
	return c
}
