package main

import (
	"io"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/spf13/cobra"

	"github.com/forkspace/forkspace"
)

func mcpCmd(a *app) *cobra.Command {
	var f agentFlags
	c := &cobra.Command{
		Use:   "mcp",
		Short: "Serve the workspace tools to an MCP client over stdio",
		Long: "Run a Model Context Protocol server on stdin/stdout whose tools (read, write, edit, ls, glob, grep,\n" +
			"stat, rm, mkdir, mv, exec, checkpoint, restore, diff, fork) act on the workspace -w names. The\n" +
			"workspace is created if missing; without -w each session gets a workspace of its own. The store\n" +
			"is created if needed. Logs go to stderr.",
		Example: "  forkspace mcp --workspace agent-1\n" +
			"  claude mcp add forkspace -- forkspace --store ~/.forkspace mcp -w agent-1",
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			ws := ""
			if a.state != "" {
				var cp string
				var err error
				if ws, cp, err = a.target(); err != nil {
					return err
				}
				if cp != "" {
					return usage("mcp works in a live workspace; use -w %s", ws)
				}
				if err := forkspace.ValidName(ws); err != nil && !strings.HasPrefix(ws, "ws-") {
					return usageError{err}
				}
			}
			srv, m, err := a.agent(c.Context(), f)
			if err != nil {
				return err
			}
			defer m.Close(c.Context())
			t := &mcp.IOTransport{Reader: io.NopCloser(a.stdin), Writer: nopWriteCloser{a.stdout}}
			return srv.Serve(c.Context(), t, ws)
		},
	}
	agentFlagSet(c, &f)
	return c
}

// agentFlagSet adds the tool options to c.
func agentFlagSet(c *cobra.Command, f *agentFlags) {
	c.Flags().BoolVar(&f.readOnly, "read-only", false, "expose only the tools that do not change the workspace")
	c.Flags().BoolVar(&f.autoCheckpoint, "auto-checkpoint", false, "checkpoint before every mutating tool call, so each can be rewound")
	c.Flags().StringVar(&f.network, "network", "off", "network for exec: off, full (not the host) or HOST:PORT,... (only those); a call gets it only when it asks")
	c.Flags().BoolVar(&f.execRoot, "exec-root", false, "run exec commands as uid 0 inside the sandbox (still without capabilities)")
	c.Flags().StringVar(&f.execMode, "exec-mode", "auto", "where exec's /workspace comes from: copy (a materialized work dir), fuse (a FUSE mount of a scratch fork) or auto (fuse where nothing is materialized yet)")
	f.limits.add(c.Flags(), "exec-", " for every exec (a call may ask for less)")
	c.Flags().IntVar(&f.runs, "exec-runs", 0, "most execs running at once across workspaces; the others queue (default: twice the CPUs, at least 4)")
}

type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }
