package main

import (
	"context"
	"fmt"
	"io"
	"os"

	"github.com/spf13/cobra"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/httpapi"
)

// policyFlags are --fail, --ours and --theirs.
type policyFlags struct{ fail, ours, theirs bool }

func (p *policyFlags) add(c *cobra.Command) {
	c.Flags().BoolVar(&p.fail, "fail", false, "on any conflict change nothing and report the conflicts (exit code 11)")
	c.Flags().BoolVar(&p.ours, "ours", false, "settle every conflict with the workspace's version")
	c.Flags().BoolVar(&p.theirs, "theirs", false, "settle every conflict with the merged state's version")
	c.MarkFlagsMutuallyExclusive("fail", "ours", "theirs")
}

func (p *policyFlags) policy() forkspace.MergePolicy {
	switch {
	case p.fail:
		return forkspace.MergeFail
	case p.ours:
		return forkspace.MergeOurs
	case p.theirs:
		return forkspace.MergeTheirs
	}
	return forkspace.MergeRecord
}

func mergeCmd(a *app) *cobra.Command {
	var (
		into, base string
		pol        policyFlags
	)
	c := &cobra.Command{
		Use:   "merge SRC",
		Short: "Merge a state (WORKSPACE or WORKSPACE@CHECKPOINT) into a workspace, three-way",
		Long: "Merge SRC into the workspace (--into, else -w) from their common ancestor: changes on one\n" +
			"side apply, text files changed on both sides merge line by line, renames carry changes along.\n" +
			"A checkpoint of the workspace as it was commits with the merge. Conflicts are recorded (see\n" +
			"'conflicts' and 'resolve'; exit code 11 while any is left), or --fail changes nothing, or\n" +
			"--ours/--theirs settle them.",
		Args: args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			ws, err := a.into(c.Context(), into)
			if err != nil {
				return err
			}
			r, err := a.backend.Merge(c.Context(), ws, httpapi.MergeRequest{From: argv[0], Base: base, Policy: pol.policy()})
			return a.printMerge("merged", r, err)
		},
	}
	c.Flags().StringVar(&into, "into", "", "workspace to merge into (default: -w)")
	c.Flags().StringVar(&base, "base", "", "state to merge from instead of the recorded common ancestor")
	pol.add(c)
	return c
}

func cherryPickCmd(a *app) *cobra.Command {
	var (
		changes bool
		pol     policyFlags
	)
	c := &cobra.Command{
		Use:   "cherry-pick STATE PATH...",
		Short: "Bring paths of a state into the workspace (-w)",
		Long: "Make each PATH of the workspace (-w) what it is in STATE, with everything beneath a\n" +
			"directory (a path STATE lacks is removed). With --changes, merge only the changes STATE\n" +
			"made at or under the paths since the common ancestor, three-way, as merge does.",
		Args: args(cobra.MinimumNArgs(2)),
		RunE: func(c *cobra.Command, argv []string) error {
			ws, err := a.into(c.Context(), "")
			if err != nil {
				return err
			}
			r, err := a.backend.CherryPick(c.Context(), ws, httpapi.CherryPickRequest{From: argv[0], Paths: argv[1:], Changes: changes, Policy: pol.policy()})
			return a.printMerge("picked", r, err)
		},
	}
	c.Flags().BoolVar(&changes, "changes", false, "merge the changes under the paths instead of copying them")
	pol.add(c)
	return c
}

func conflictsCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "conflicts",
		Short: "List the workspace's unresolved merge conflicts",
		Args:  args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			ws, err := a.into(c.Context(), "")
			if err != nil {
				return err
			}
			cs, err := a.backend.Conflicts(c.Context(), ws)
			if err != nil {
				return err
			}
			if a.json {
				return a.printJSON(cs)
			}
			printConflicts(a, cs)
			return nil
		},
	}
}

func resolveCmd(a *app) *cobra.Command {
	var (
		ours, theirs, markers bool
		content               string
	)
	c := &cobra.Command{
		Use:   "resolve PATH (--ours | --theirs | --markers | --content FILE)",
		Short: "Settle one merge conflict of the workspace (-w)",
		Long: "Settle the conflict at PATH: put the workspace's version before the merge (--ours), the\n" +
			"merged state's (--theirs), the text merged with conflict markers to edit (--markers), or\n" +
			"the contents of FILE ('-' for standard input). Resolving the last conflict commits the merge.",
		Args: args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			var r forkspace.Resolution
			switch {
			case ours:
				r.Take = forkspace.TakeOurs
			case theirs:
				r.Take = forkspace.TakeTheirs
			case markers:
				r.Take = forkspace.TakeMarkers
			case content != "":
				data, err := a.readInput(content)
				if err != nil {
					return err
				}
				r = forkspace.Resolution{Take: forkspace.TakeContent, Content: data}
			default:
				return usage("resolve: say how: --ours, --theirs, --markers or --content FILE")
			}
			ws, err := a.into(c.Context(), "")
			if err != nil {
				return err
			}
			left, err := a.backend.Resolve(c.Context(), ws, httpapi.ConflictResolution{Path: argv[0], Take: r.Take, Content: r.Content})
			if err != nil {
				return err
			}
			if a.json {
				return a.printJSON(map[string]any{"workspace": ws, "path": argv[0], "resolved": r.Take, "conflicts_left": left})
			}
			if left == 0 {
				_, err = fmt.Fprintf(a.stdout, "resolved %s (%s); no conflict left: the merge is committed\n", argv[0], r.Take)
				return err
			}
			_, err = fmt.Fprintf(a.stdout, "resolved %s (%s); %d conflicts left\n", argv[0], r.Take, left)
			return err
		},
	}
	c.Flags().BoolVar(&ours, "ours", false, "take the workspace's version from before the merge")
	c.Flags().BoolVar(&theirs, "theirs", false, "take the merged state's version")
	c.Flags().BoolVar(&markers, "markers", false, "write the text with conflict markers")
	c.Flags().StringVar(&content, "content", "", "write the contents of FILE ('-': standard input)")
	c.MarkFlagsMutuallyExclusive("ours", "theirs", "markers", "content")
	return c
}

// into names the live workspace a merge-like command changes (--into,
// else -w) and readies the backend (the store, or a running server).
func (a *app) into(ctx context.Context, into string) (string, error) {
	if into == "" {
		ws, cp, err := a.target()
		if err != nil {
			return "", err
		}
		if cp != "" {
			return "", fmt.Errorf("%s: %w: a checkpoint cannot change; use -w %s", a.state, errdefs.ErrReadOnly, ws)
		}
		into = ws
	}
	_, err := a.api(ctx)
	return into, err
}

// readInput reads a file, or standard input for "-".
func (a *app) readInput(name string) ([]byte, error) {
	if name == "-" {
		return io.ReadAll(a.stdin)
	}
	return os.ReadFile(name)
}

// printMerge prints a merge's or cherry-pick's result (also when err
// reports conflicts that stopped it) and turns unresolved conflicts into
// exit code 11.
func (a *app) printMerge(verb string, r forkspace.MergeResult, err error) error {
	stopped := err != nil && len(r.Conflicts) > 0
	if err != nil && !stopped {
		return err
	}
	left := 0
	for _, c := range r.Conflicts {
		if c.Resolved == "" {
			left++
		}
	}
	if a.json {
		if perr := a.printJSON(r); perr != nil {
			return perr
		}
	} else {
		if stopped {
			fmt.Fprintf(a.stdout, "nothing merged: %d conflicts\n", len(r.Conflicts))
		} else {
			base := ""
			if r.Base != "" {
				base = ", base " + r.Base
			}
			fmt.Fprintf(a.stdout, "%s %s into %s: %d paths changed (checkpoint before: %s%s)\n", verb, r.From, r.Into, len(r.Changed), r.Checkpoint, base)
		}
		printConflicts(a, r.Conflicts)
		if left > 0 && !stopped {
			fmt.Fprintf(a.stdout, "%d conflicts left: see 'forkspace conflicts', settle each with 'forkspace resolve PATH --ours|--theirs|--markers|--content FILE'\n", left)
		}
	}
	if stopped {
		if a.json {
			return exitStatus{exitConflict}
		}
		return err
	}
	if left > 0 {
		return exitStatus{exitConflict}
	}
	return nil
}

// printConflicts writes one line per conflict: path, kind, how it was
// settled (if by a policy) and the detail.
func printConflicts(a *app, cs []forkspace.Conflict) {
	if len(cs) == 0 {
		return
	}
	tw := table(a.stdout)
	fmt.Fprintln(tw, "PATH\tKIND\tRESOLVED\tDETAIL")
	for _, c := range cs {
		res := c.Resolved
		if res == "" {
			res = "-"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", c.Path, c.Kind, res, c.Detail)
	}
	_ = tw.Flush()
}
