package main

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/forkspace/forkspace/audit"
)

func logCmd(a *app) *cobra.Command {
	var f audit.Filter
	cmd := &cobra.Command{
		Use:   "log",
		Short: "Show the audit log of mutating calls, newest first",
		Long: "Show the audit log: every mutating call made through the tools, MCP, sandboxed exec\n" +
			"and audited library handles, with actor, session, tool, argument digest, outcome,\n" +
			"duration, changed paths and the automatic checkpoint that rewinds it.\n" +
			"With -w only that workspace's calls are shown.",
		Example: "  forkspace log -w agent-1 --limit 20\n  forkspace log --session s-42 --json",
		Args:    args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			api, err := a.api(c.Context())
			if err != nil {
				return err
			}
			entries, err := api.Audit(c.Context(), a.state, f)
			if err != nil {
				return err
			}
			if a.json {
				return a.printJSON(entries)
			}
			infos, err := a.workspaces(c.Context())
			if err != nil {
				return err
			}
			names := map[string]string{}
			for _, i := range infos {
				names[i.ID] = i.Name
			}
			tw := table(a.stdout)
			fmt.Fprintln(tw, "SEQ\tTIME\tWORKSPACE\tACTOR\tSESSION\tTOOL\tOUTCOME\tDURATION\tCHANGED\tCHECKPOINT\tDETAIL")
			for _, e := range entries {
				ws := names[e.WorkspaceID]
				if ws == "" {
					ws = e.WorkspaceID
				}
				fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", e.Seq, when(e.Time), dash(ws), dash(e.Actor),
					dash(e.Session), e.Tool, outcome(e.Error), e.Duration.Round(10_000), paths(e.Changed), dash(e.Checkpoint), dash(e.Detail))
			}
			return tw.Flush()
		},
	}
	cmd.Flags().StringVar(&f.Session, "session", "", "only calls of this session")
	cmd.Flags().IntVar(&f.Limit, "limit", 50, "at most this many entries (0: all)")
	cmd.Flags().Int64Var(&f.Before, "before", 0, "only entries with a sequence number below this (paging)")
	return cmd
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// outcome is "ok" or the error text on one line, shortened.
func outcome(err string) string {
	if err == "" {
		return "ok"
	}
	err = strings.Join(strings.Fields(err), " ")
	if len(err) > 60 {
		err = err[:57] + "..."
	}
	return "error: " + err
}

// paths lists up to three changed paths and how many more there are.
func paths(ps []string) string {
	switch {
	case len(ps) == 0:
		return "-"
	case len(ps) <= 3:
		return strings.Join(ps, ",")
	}
	return fmt.Sprintf("%s,+%d", strings.Join(ps[:3], ","), len(ps)-3)
}
