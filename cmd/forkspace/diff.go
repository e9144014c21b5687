package main

import (
	"context"
	"io"

	"github.com/spf13/cobra"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/httpapi"
)

func diffCmd(a *app) *cobra.Command {
	var unified bool
	c := &cobra.Command{
		Use:   "diff FROM [TO]",
		Short: "Compare two states (WORKSPACE or WORKSPACE@CHECKPOINT)",
		Long: "Compare two states. With one argument, WS@CP is compared with WS's live head, and WS\n" +
			"with the state it was forked from.",
		Args: args(cobra.RangeArgs(1, 2)),
		RunE: func(c *cobra.Command, argv []string) error {
			ctx := c.Context()
			api, err := a.api(ctx)
			if err != nil {
				return err
			}
			from, to, err := diffStates(ctx, api, argv)
			if err != nil {
				return err
			}
			changes, err := api.Diff(ctx, from, to, unified)
			if err != nil {
				return err
			}
			if a.json {
				return a.printJSON(changes)
			}
			_, err = io.WriteString(a.stdout, httpapi.FormatChanges(changes))
			return err
		},
	}
	c.Flags().BoolVarP(&unified, "unified", "u", false, "show unified diffs of changed text files")
	return c
}

// diffStates expands the one-argument forms into two states.
func diffStates(ctx context.Context, api httpapi.API, argv []string) (from, to string, err error) {
	if len(argv) == 2 {
		return argv[0], argv[1], nil
	}
	ws, cp, err := forkspace.ParseState(argv[0])
	if err != nil {
		return "", "", err
	}
	if cp != "" {
		return argv[0], ws, nil
	}
	parent, err := api.Parent(ctx, ws)
	if err != nil {
		return "", "", err
	}
	return parent, ws, nil
}
