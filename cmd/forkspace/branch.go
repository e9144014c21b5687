package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/forkspace/forkspace/httpapi"
)

// Best-of-N: fork N ways, compare, promote.

func forkCmd(a *app) *cobra.Command {
	var (
		n      int
		prefix string
	)
	c := &cobra.Command{
		Use:   "fork WS [NAME...] [--n N]",
		Short: "Fork a workspace's live state N ways in one step (best-of-N)",
		Long: "Fork WS's live state into the NAMEs, or --n N forks named PREFIX-K (--prefix, default WS)\n" +
			"for the N smallest K whose name is free, in one transaction, from a checkpoint\n" +
			"'fork N ways: …' of WS. Compare them with 'compare', keep one with 'promote'.",
		Args: args(cobra.MinimumNArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			names := argv[1:]
			switch {
			case len(names) == 0 && n == 0:
				return usage("fork: give the names of the forks or --n N")
			case len(names) > 0 && n != 0 && n != len(names):
				return usage("fork: --n %d with %d names", n, len(names))
			case len(names) > 0 && prefix != "":
				return usage("fork: --prefix names generated forks; give names or --prefix, not both")
			case len(names) > 0:
				n = len(names)
			}
			api, err := a.api(c.Context())
			if err != nil {
				return err
			}
			infos, err := api.ForkN(c.Context(), argv[0], httpapi.ForkNRequest{N: n, Names: names, Prefix: prefix})
			if err != nil {
				return err
			}
			if a.json {
				return a.printJSON(infos)
			}
			for _, in := range infos {
				fmt.Fprintf(a.stdout, "forked %s as %s (%s)\n", argv[0], in.Name, in.ID)
			}
			return nil
		},
	}
	c.Flags().IntVarP(&n, "n", "n", 0, "number of forks")
	c.Flags().StringVar(&prefix, "prefix", "", "prefix of the generated names (default: WS)")
	return c
}

func compareCmd(a *app) *cobra.Command {
	var unified bool
	c := &cobra.Command{
		Use:   "compare STATE STATE...",
		Short: "Compare 2 to 16 states pairwise: a change-count matrix and each pair's diff",
		Args:  args(cobra.RangeArgs(2, 16)),
		RunE: func(c *cobra.Command, argv []string) error {
			api, err := a.api(c.Context())
			if err != nil {
				return err
			}
			cmp, err := api.Compare(c.Context(), argv, unified)
			if err != nil {
				return err
			}
			if a.json {
				return a.printJSON(cmp)
			}
			tw := table(a.stdout)
			fmt.Fprintf(tw, "CHANGES\t%s\n", strings.Join(cmp.States, "\t"))
			for i, row := range cmp.Changes {
				fmt.Fprintf(tw, "%s", cmp.States[i])
				for _, n := range row {
					fmt.Fprintf(tw, "\t%d", n)
				}
				fmt.Fprintln(tw)
			}
			if err := tw.Flush(); err != nil {
				return err
			}
			for _, p := range cmp.Pairs {
				fmt.Fprintf(a.stdout, "\n%s -> %s: %d changes\n", p.From, p.To, len(p.Changes))
				if _, err := io.WriteString(a.stdout, httpapi.FormatChanges(p.Changes)); err != nil {
					return err
				}
			}
			return nil
		},
	}
	c.Flags().BoolVarP(&unified, "unified", "u", false, "show unified diffs of changed text files")
	return c
}

func promoteCmd(a *app) *cobra.Command {
	var (
		head, keep bool
		pol        policyFlags
	)
	c := &cobra.Command{
		Use:   "promote FORK [--head] [--keep]",
		Short: "Merge a fork into its parent (or make it the head) and delete the other forks of its 'fork --n'",
		Long: "Merge FORK into the workspace it was forked from, three-way as 'merge' does (--fail,\n" +
			"--ours, --theirs), or with --head make FORK's state the parent's live head (a checkpoint\n" +
			"'promote: before FORK' of the parent is taken first either way). Then delete the other\n" +
			"forks made by the same 'fork' (the forks of the same checkpoint), unless --keep. FORK stays.",
		Args: args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			if head && pol.policy() != "" {
				return usage("promote: --head replaces the parent's state; --fail, --ours and --theirs are for merging")
			}
			api, err := a.api(c.Context())
			if err != nil {
				return err
			}
			res, err := api.Promote(c.Context(), argv[0], httpapi.PromoteRequest{Head: head, Policy: pol.policy(), Keep: keep})
			if err != nil {
				return err // a fail policy's stop is ErrConflict: exit 11
			}
			left := 0
			if res.Merge != nil {
				for _, cf := range res.Merge.Conflicts {
					if cf.Resolved == "" {
						left++
					}
				}
			}
			if a.json {
				if err := a.printJSON(res); err != nil {
					return err
				}
			} else {
				if res.Merge != nil {
					_ = a.printMerge("promoted", *res.Merge, nil) // its exit status is left's, below
				} else {
					fmt.Fprintf(a.stdout, "promoted %s: it is the head of %s now (checkpoint before: %s)\n", res.Winner, res.Into, res.Checkpoint)
				}
				if len(res.Deleted) > 0 {
					fmt.Fprintf(a.stdout, "deleted %s\n", strings.Join(res.Deleted, ", "))
				}
			}
			if left > 0 {
				return exitStatus{exitConflict}
			}
			return nil
		},
	}
	c.Flags().BoolVar(&head, "head", false, "make FORK's state the parent's head instead of merging it")
	c.Flags().BoolVar(&keep, "keep", false, "keep the other forks")
	pol.add(c)
	return c
}
