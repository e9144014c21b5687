package main

import (
	"fmt"

	"github.com/spf13/cobra"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/httpapi"
	"github.com/forkspace/forkspace/meta"
)

func workspaceCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:     "workspace",
		Aliases: []string{"ws"},
		Short:   "Create, list, inspect, fork and delete workspaces",
		Args:    args(cobra.NoArgs),
		RunE:    func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	c.AddCommand(wsCreateCmd(a), wsListCmd(a), wsInfoCmd(a), wsForkCmd(a), wsDeleteCmd(a), wsPolicyCmd(a))
	return c
}

func wsCreateCmd(a *app) *cobra.Command {
	var (
		quota  meta.Quota
		mounts []string
	)
	c := &cobra.Command{
		Use:   "create NAME",
		Short: "Create an empty workspace",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			api, err := a.api(c.Context())
			if err != nil {
				return err
			}
			info, err := api.CreateWorkspace(c.Context(), httpapi.CreateRequest{Name: argv[0], Quota: quota, Mounts: mounts})
			if err != nil {
				return err
			}
			return a.printWorkspace(info, "created")
		},
	}
	c.Flags().Int64Var(&quota.MaxBytes, "quota-bytes", 0, "limit on the logical bytes of files (0: none)")
	c.Flags().Int64Var(&quota.MaxEntries, "quota-entries", 0, "limit on files, directories and links (0: none)")
	c.Flags().StringArrayVar(&mounts, "mount", nil, "mount a source at a root, /ROOT=URL (repeatable; see 'forkspace mount --help')")
	return c
}

// printWorkspace reports a new workspace: its Info as JSON, or one line.
func (a *app) printWorkspace(info forkspace.Info, verb string) error {
	if a.json {
		return a.printJSON(info)
	}
	_, err := fmt.Fprintf(a.stdout, "%s workspace %s (%s)\n", verb, info.Name, info.ID)
	return err
}

func wsListCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "list",
		Aliases: []string{"ls"},
		Short:   "List workspaces",
		Args:    args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			infos, err := a.workspaces(c.Context())
			if err != nil {
				return err
			}
			if a.json {
				return a.printJSON(infos)
			}
			names := make(map[string]string, len(infos))
			for _, i := range infos {
				names[i.ID] = i.Name
			}
			tw := table(a.stdout)
			fmt.Fprintln(tw, "NAME\tID\tPARENT\tENTRIES\tSIZE\tCHECKPOINTS\tCREATED")
			for _, i := range infos {
				parent := "-"
				if i.ParentID != "" {
					parent = names[i.ParentID]
					if parent == "" {
						parent = i.ParentID + " (deleted)"
					}
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%d\t%s\n", i.Name, i.ID, parent, i.Entries, size(i.Bytes), i.Checkpoints, when(i.CreatedAt))
			}
			return tw.Flush()
		},
	}
}

func wsInfoCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "info NAME",
		Short: "Describe a workspace: identity, lineage, quota, usage",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			api, err := a.api(c.Context())
			if err != nil {
				return err
			}
			i, err := api.WorkspaceInfo(c.Context(), argv[0])
			if err != nil {
				return err
			}
			if a.json {
				return a.printJSON(i)
			}
			tw := table(a.stdout)
			fmt.Fprintf(tw, "name:\t%s\n", i.Name)
			fmt.Fprintf(tw, "id:\t%s\n", i.ID)
			if i.ParentID != "" {
				fmt.Fprintf(tw, "parent:\t%s\n", i.ParentID)
			}
			if i.Origin != "" {
				fmt.Fprintf(tw, "forked at:\t%s\n", i.Origin)
			}
			fmt.Fprintf(tw, "entries:\t%d\n", i.Entries)
			fmt.Fprintf(tw, "size:\t%s (%d bytes)\n", size(i.Bytes), i.Bytes)
			fmt.Fprintf(tw, "exclusive:\t%s (stored bytes only it reaches)\n", size(i.ExclusiveBytes))
			fmt.Fprintf(tw, "shared:\t%s (stored bytes others reach too)\n", size(i.SharedBytes))
			fmt.Fprintf(tw, "quota:\t%s\n", quotaString(i.Quota))
			fmt.Fprintf(tw, "checkpoints:\t%d\n", i.Checkpoints)
			if i.Conflicts > 0 {
				fmt.Fprintf(tw, "conflicts:\t%d unresolved (forkspace -w %s conflicts)\n", i.Conflicts, i.Name)
			}
			fmt.Fprintf(tw, "created:\t%s\n", when(i.CreatedAt))
			fmt.Fprintf(tw, "updated:\t%s\n", when(i.UpdatedAt))
			return tw.Flush()
		},
	}
}

func quotaString(q meta.Quota) string {
	b, e := "unlimited bytes", "unlimited entries"
	if q.MaxBytes > 0 {
		b = size(q.MaxBytes)
	}
	if q.MaxEntries > 0 {
		e = fmt.Sprintf("%d entries", q.MaxEntries)
	}
	return b + ", " + e
}

func wsForkCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "fork SRC[@CHECKPOINT] NAME",
		Short: "Fork a workspace (its live state or a checkpoint) in constant time",
		Args:  args(cobra.ExactArgs(2)),
		RunE: func(c *cobra.Command, argv []string) error {
			api, err := a.api(c.Context())
			if err != nil {
				return err
			}
			info, err := api.ForkWorkspace(c.Context(), argv[0], httpapi.ForkRequest{Name: argv[1]})
			if err != nil {
				return err
			}
			return a.printWorkspace(info, "forked "+argv[0]+" as")
		},
	}
}

func wsDeleteCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:     "delete NAME",
		Aliases: []string{"rm"},
		Short:   "Delete a workspace and its checkpoints (forks are untouched)",
		Args:    args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			api, err := a.api(c.Context())
			if err != nil {
				return err
			}
			// The store's OnDelete removes the host copy exec materialized.
			return api.DeleteWorkspace(c.Context(), argv[0])
		},
	}
}

func wsPolicyCmd(a *app) *cobra.Command {
	var (
		pol   execPolicyFlags
		clear bool
	)
	c := &cobra.Command{
		Use:   "policy NAME [--exec-network off|full|HOST:PORT,...] [--exec-memory SIZE ...] [--clear]",
		Short: "Show or set the workspace's exec policy: the network and limit caps of its commands",
		Long: "A command run in the workspace gets the narrowest of the server's policy (serve --network and\n" +
			"--exec-* limits), this workspace's and the token's (token create --exec-*). Without flags, prints\n" +
			"the workspace's policy; with flags, replaces it with what they set (--clear: none, the server's).\n" +
			"Through a server this needs a token with admin on the workspace, and sets only what is within\n" +
			"that token's own policy. Forks keep the policy of the workspace they are forked from.",
		Example: "  forkspace workspace policy agent-1 --exec-network registry.npmjs.org:443 --exec-memory 1GiB\n" +
			"  forkspace workspace policy agent-1 --clear",
		Args: args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			p, err := pol.parse()
			if err != nil {
				return err
			}
			set := clear || c.Flags().NFlag() > 0
			if clear && !p.IsZero() {
				return usage("--clear sets no policy: give it alone")
			}
			api, err := a.api(c.Context())
			if err != nil {
				return err
			}
			if set {
				p, err = api.SetExecPolicy(c.Context(), argv[0], p)
			} else {
				p, err = api.ExecPolicy(c.Context(), argv[0])
			}
			if err != nil {
				return err
			}
			if a.json {
				return a.printJSON(p)
			}
			_, err = fmt.Fprintf(a.stdout, "exec policy of %s: %s\n", argv[0], p)
			return err
		},
	}
	pol.add(c.Flags(), "exec-", "")
	c.Flags().BoolVar(&clear, "clear", false, "remove the workspace's policy (the server's applies)")
	return c
}
