package main

import (
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/forkspace/forkspace/auth"
)

func tokenCmd(a *app) *cobra.Command {
	c := &cobra.Command{
		Use:   "token",
		Short: "Create, list and revoke access tokens (serve needs one once any exists)",
		Long: "Tokens give access to a running server (REST, MCP, the dashboard, WebDAV and S3): a tenant,\n" +
			"a pattern of workspace names, permissions (read, write, exec, admin) and an optional expiry.\n" +
			"The secret is printed once and only its hash is kept. Once the store holds a token, serve\n" +
			"requires one on every request; the CLI sends $FORKSPACE_TOKEN or --token. On a store it\n" +
			"opens itself the CLI acts as the store's owner and creates any token; through a server a\n" +
			"token creates only narrower ones (its tenant, a narrower pattern, fewer permissions, an\n" +
			"earlier expiry). Revoking a token revokes every token created from it.",
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error { return c.Help() },
	}
	c.AddCommand(tokenCreateCmd(a), tokenListCmd(a), tokenRevokeCmd(a))
	return c
}

func tokenCreateCmd(a *app) *cobra.Command {
	var (
		req     auth.Request
		perms   string
		expires string
		pol     execPolicyFlags
	)
	c := &cobra.Command{
		Use:   "create --perm PERMS [--tenant T] [--workspaces PATTERN] [--expires 1h]",
		Short: "Create a token and print its secret (shown this once)",
		Example: "  forkspace token create --tenant '*' --perm all --label admin       # the store's administrator\n" +
			"  forkspace token create --workspaces 'agent-1*' --perm read,write,exec\n" +
			"  FORKSPACE_TOKEN=$PARENT forkspace token create --workspaces agent-1-fork --perm read --expires 1h",
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			if perms == "" {
				return usage("--perm is required: read, write, exec, admin or all, comma-separated")
			}
			p, err := auth.ParsePerms(perms)
			if err != nil {
				return usage("--perm: %v", err)
			}
			req.Perms = p
			if req.Exec, err = pol.parse(); err != nil {
				return err
			}
			if expires != "" {
				d, err := parseLifetime(expires)
				if err != nil {
					return usage("--expires: %v", err)
				}
				req.ExpiresIn = d
			}
			api, err := a.api(c.Context())
			if err != nil {
				return err
			}
			t, err := api.CreateToken(c.Context(), req)
			if err != nil {
				return err
			}
			if a.json {
				return a.printJSON(t)
			}
			fmt.Fprintf(a.stderr, "created token %s: %s (shown once; S3 access key %s, secret key %s)\n", t.ID, describeToken(t.Info), t.S3AccessKey, t.S3SecretKey)
			_, err = fmt.Fprintln(a.stdout, t.Token)
			return err
		},
	}
	c.Flags().StringVar(&req.Tenant, "tenant", "", "tenant the token acts in ('*': every tenant; default: default, or the caller's)")
	c.Flags().StringVar(&req.Workspaces, "workspaces", "", "workspace names it reaches, a pattern such as agent-1* (default: all, or the caller's)")
	c.Flags().StringVar(&perms, "perm", "", "permissions, comma-separated: read, write, exec, admin, or all (required)")
	c.Flags().StringVar(&expires, "expires", "", "lifetime, such as 30m, 1h or 7d (default: none, or the caller's expiry)")
	c.Flags().StringVar(&req.Label, "label", "", "a note saying what the token is for")
	pol.add(c.Flags(), "exec-", " of the commands the token runs (within the caller's)")
	return c
}

// parseLifetime reads a Go duration, or a number of days ("7d").
func parseLifetime(s string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		var days int
		if _, err := fmt.Sscanf(n, "%d", &days); err != nil || days <= 0 || fmt.Sprint(days) != n {
			return 0, fmt.Errorf("%q: want a duration such as 1h or 7d", s)
		}
		return time.Duration(days) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("%q: want a positive duration such as 1h or 7d", s)
	}
	return d, nil
}

// describeToken is one line about a token.
func describeToken(t auth.Info) string {
	s := fmt.Sprintf("tenant %s, workspaces %s, %s", t.Tenant, t.Workspaces, t.Perms)
	if !t.ExpiresAt.IsZero() {
		s += ", expires " + t.ExpiresAt.Local().Format(time.RFC3339)
	}
	if !t.Exec.IsZero() {
		s += ", exec " + t.Exec.String()
	}
	return s
}

func tokenListCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the tokens you manage (their secrets are never shown again)",
		Args:  args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			api, err := a.api(c.Context())
			if err != nil {
				return err
			}
			ts, err := api.Tokens(c.Context())
			if err != nil {
				return err
			}
			if a.json {
				return a.printJSON(ts)
			}
			tw := tabwriter.NewWriter(a.stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "ID\tTENANT\tWORKSPACES\tPERMS\tSTATE\tEXPIRES\tPARENT\tLABEL")
			for _, t := range ts {
				exp := "-"
				if !t.ExpiresAt.IsZero() {
					exp = t.ExpiresAt.Local().Format(time.RFC3339)
				}
				parent := t.Parent
				if parent == "" {
					parent = "-"
				}
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", t.ID, t.Tenant, t.Workspaces, t.Perms, t.State, exp, parent, t.Label)
			}
			return tw.Flush()
		},
	}
}

func tokenRevokeCmd(a *app) *cobra.Command {
	return &cobra.Command{
		Use:   "revoke ID",
		Short: "Revoke a token and every token created from it",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			api, err := a.api(c.Context())
			if err != nil {
				return err
			}
			if err := api.RevokeToken(c.Context(), argv[0]); err != nil {
				return err
			}
			if a.json {
				return a.printJSON(map[string]string{"revoked": argv[0]})
			}
			_, err = fmt.Fprintf(a.stdout, "revoked token %s and the tokens created from it\n", argv[0])
			return err
		},
	}
}
