package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/audit"
)

func historyCmd(a *app) *cobra.Command {
	var opts forkspace.HistoryOptions
	cmd := &cobra.Command{
		Use:   "history [WORKSPACE]",
		Short: "List a workspace's audited steps with the state each left, newest first",
		Long: "List the audited calls that changed a workspace (from every door: tools, MCP, exec, REST,\n" +
			"the CLI), newest first, with the paths each changed, exec's command text, and the\n" +
			"state each left. Any command that takes a state takes those: WS@~N (N steps before\n" +
			"the newest), WS@audit:SEQ, WS@TIME (RFC 3339: the newest step at or before it), e.g.\n" +
			"cat, ls, diff, export, fork --from, restore. The store's retention policy (history_steps,\n" +
			"history_age) bounds how far back they go. WORKSPACE defaults to -w.",
		Example: "  forkspace history agent-1\n  forkspace diff agent-1@~3 agent-1\n  forkspace -w agent-1 restore '~2'\n  forkspace history agent-1 --limit 5 --json",
		Args:    args(cobra.MaximumNArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			ws := a.state
			if len(argv) == 1 {
				ws = argv[0]
			}
			if ws == "" {
				return usage("no workspace: name one or use -w NAME")
			}
			api, err := a.api(c.Context())
			if err != nil {
				return err
			}
			steps, err := api.History(c.Context(), ws, opts)
			if err != nil {
				return err
			}
			if a.json {
				return a.printJSON(steps)
			}
			tw := table(a.stdout)
			fmt.Fprintln(tw, "STATE\tSEQ\tTIME\tTOOL\tOUTCOME\tCHANGED\tCOMMAND")
			for _, s := range steps {
				state := s.Back
				if state == "" {
					state = s.State
				}
				fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\t%s\n", dash(state), s.Seq, when(s.Time), s.Tool, outcome(s.Error),
					paths(s.Changed), dash(oneLine(s.Command)))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().IntVar(&opts.Limit, "limit", 20, "at most this many steps")
	cmd.Flags().Int64Var(&opts.Before, "before", 0, "only steps with a sequence number below this (paging)")
	return cmd
}

// oneLine shortens a command to one line of at most 60 characters.
func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 60 {
		s = s[:57] + "..."
	}
	return s
}

// audited runs fn, a mutation of the -w workspace the CLI makes on the
// store itself rather than through the API, as one audited call (tool
// "cli.OP", actor cli), as the API's calls are. A checkpoint view is not
// recorded: fn fails on it.
func (a *app) audited(ctx context.Context, op string, args any, paths []string, fn func(context.Context) error) error {
	ws, cp, err := a.target()
	if err != nil {
		return err
	}
	if cp != "" {
		return fn(ctx)
	}
	st, err := a.open(ctx, false)
	if err != nil {
		return err
	}
	w, err := st.Workspace(ctx, ws)
	if err != nil {
		return err
	}
	ctx = audit.WithActor(ctx, audit.Actor{Name: "cli"})
	return audit.Run(ctx, st.AuditLog(), audit.Call{WorkspaceID: w.ID(), Tool: "cli." + op, Args: args},
		func(ctx context.Context) ([]string, error) { return paths, fn(ctx) })
}
