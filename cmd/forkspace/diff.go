package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/vfs"
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
			st, err := a.open(ctx, false)
			if err != nil {
				return err
			}
			from, to, err := diffStates(ctx, st, argv)
			if err != nil {
				return err
			}
			changes, err := st.Diff(ctx, from, to, vfs.DiffOptions{Unified: unified})
			if err != nil {
				return err
			}
			if a.json {
				if changes == nil {
					changes = []vfs.Change{}
				}
				return a.printJSON(changes)
			}
			printChanges(a, changes)
			return nil
		},
	}
	c.Flags().BoolVarP(&unified, "unified", "u", false, "show unified diffs of changed text files")
	return c
}

// diffStates expands the one-argument forms into two states.
func diffStates(ctx context.Context, st *forkspace.Store, argv []string) (from, to string, err error) {
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
	parent, err := st.Parent(ctx, ws)
	if err != nil {
		return "", "", err
	}
	return parent, ws, nil
}

// printChanges writes one line per change ("A path", "M path", "D path",
// "R old -> new", with "(hard link of p)" or "(replaced)" when so), each
// followed by its unified diff if any.
func printChanges(a *app, changes []vfs.Change) {
	for _, ch := range changes {
		mark := strings.ToUpper(ch.Op.String()[:1])
		name := ch.Path
		if ch.Type == "dir" {
			name += "/"
		}
		switch {
		case ch.Op == vfs.Renamed:
			name = ch.OldPath + " -> " + name
		case ch.Link != "":
			name += " (hard link of " + ch.Link + ")"
		case ch.Replaced:
			name += " (replaced)"
		}
		fmt.Fprintf(a.stdout, "%s %s\n", mark, name)
		if ch.Unified != "" {
			fmt.Fprint(a.stdout, ch.Unified)
			if !strings.HasSuffix(ch.Unified, "\n") {
				fmt.Fprintln(a.stdout)
			}
		}
	}
}
