package main

import (
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"

	"github.com/forkspace/forkspace/provider"
	"github.com/forkspace/forkspace/sandbox"
	"github.com/forkspace/forkspace/tools"
)

// Exit statuses of exec for a run that did not end on its own (the shell
// conventions: timeout(1) and a SIGKILL).
const (
	exitTimedOut = 124
	exitKilled   = 137
)

// exitStatus passes a command's exit status through as forkspace's own,
// printing nothing.
type exitStatus struct{ code int }

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", e.code) }

func execCmd(a *app) *cobra.Command {
	var (
		timeout, cpu      time.Duration
		memory, disk      string
		processes, nfiles int
		network           string
		root              bool
	)
	c := &cobra.Command{
		Use:   "exec [flags] -- COMMAND [ARG...]",
		Short: "Run a command in the workspace, confined like the exec tool",
		Long: "Run COMMAND in the bubblewrap sandbox against the workspace -w names, with the same confinement,\n" +
			"limits, result and audit record as the MCP exec tool; its changes are pulled back into the\n" +
			"workspace. One argument is a shell command (/bin/sh -c); several are quoted into one.\n" +
			"Output streams as it comes; how the run ended and what it used go to stderr afterwards (with\n" +
			"--json, the whole result goes to stdout instead). The exit status is the command's, 124 when\n" +
			"it timed out, 137 when a limit killed it, and 6 (quota) or 1 when the workspace refused the\n" +
			"command's changes (then none of them was kept).",
		Example: "  forkspace -w agent-1 exec -- go test ./...\n" +
			"  forkspace -w agent-1 exec --memory 512MiB --timeout 10m -- 'make -j4 && make check'",
		Args: args(cobra.MinimumNArgs(1)),
		RunE: func(c *cobra.Command, argv []string) error {
			ctx := c.Context()
			policy, err := sandbox.ParseNetwork(network)
			if err != nil {
				return usage("--network: %v", err)
			}
			req := provider.ExecRequest{Command: shellJoin(argv), Timeout: timeout, Network: policy.Mode != sandbox.NetworkOff,
				Limits: provider.Limits{CPUTime: cpu, Processes: processes, OpenFiles: nfiles}}
			if req.Limits.Memory, err = parseSize("--memory", memory); err != nil {
				return err
			}
			if req.Limits.Disk, err = parseSize("--disk", disk); err != nil {
				return err
			}
			if timeout < 0 || cpu < 0 || processes < 0 || nfiles < 0 {
				return usage("exec: limits must not be negative")
			}
			w, err := a.live(ctx, "exec")
			if err != nil {
				return err
			}
			sh := sandbox.New(w, sandbox.Options{Audit: a.st.AuditLog(), Network: policy, Root: root})
			defer sh.Close()
			stdout, stderr := a.stdout, a.stderr
			if a.json {
				stdout, stderr = nil, nil
			}
			res, err := sh.ExecStream(ctx, req, stdout, stderr)
			if err != nil {
				return err
			}
			if a.json {
				err = a.printJSON(res)
			} else {
				_, err = io.WriteString(a.stderr, tools.ExecStatus(res)+tools.ExecChanges(res))
			}
			if err != nil {
				return err
			}
			switch {
			case res.PullError != "":
				return exitStatus{pullExit(res)}
			case res.TimedOut:
				return exitStatus{exitTimedOut}
			case res.Killed != "":
				return exitStatus{exitKilled}
			case res.ExitCode != 0:
				return exitStatus{res.ExitCode}
			}
			return nil
		},
	}
	f := c.Flags()
	f.DurationVar(&timeout, "timeout", 0, "kill the command after this long (default: the sandbox's, 60s)")
	f.DurationVar(&cpu, "cpu", 0, "CPU time limit of the whole process tree (default 10m)")
	f.StringVar(&memory, "memory", "", "memory limit of the whole process tree, e.g. 512MiB (default 2GiB)")
	f.IntVar(&processes, "processes", 0, "most processes and threads alive at once (default 1024)")
	f.IntVar(&nfiles, "open-files", 0, "most open files per process (default 4096)")
	f.StringVar(&disk, "disk", "", "most bytes the command may add to the workspace, e.g. 1GiB (default 4GiB)")
	f.StringVar(&network, "network", "off", "network: off, full (not the host) or HOST:PORT,... (only those)")
	f.BoolVar(&root, "root", false, "run as uid 0 inside the sandbox (still without capabilities)")
	return c
}

// pullExit is the exit status of a run whose changes the workspace
// refused: 6 for the quota, 1 otherwise.
func pullExit(res provider.ExecResult) int {
	for _, d := range res.Dropped {
		if d.Reason == sandbox.ReasonQuota {
			return exitQuota
		}
	}
	return exitFailure
}

// parseSize parses a --memory or --disk value ("" is 0: the default).
func parseSize(flag, v string) (int64, error) {
	if v == "" {
		return 0, nil
	}
	n, err := humanize.ParseBytes(v)
	if err != nil || n > 1<<62 {
		return 0, usage("exec: %s %q: want a size such as 512MiB", flag, v)
	}
	return int64(n), nil
}

// shellJoin makes argv one /bin/sh command: a single argument as it is,
// several each single-quoted.
func shellJoin(argv []string) string {
	if len(argv) == 1 {
		return argv[0]
	}
	q := make([]string, len(argv))
	for i, s := range argv {
		q[i] = "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}
