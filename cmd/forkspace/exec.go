package main

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/dustin/go-humanize"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/execpolicy"
	"github.com/forkspace/forkspace/httpapi"
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

// capFlags are limits of a run given on the command line.
type capFlags struct {
	cpu               time.Duration
	memory, disk      string
	processes, nfiles int
}

// add registers the flags, each name after prefix; defaults names each
// flag's default (nil: none) and note follows each help text.
func (l *capFlags) add(f *pflag.FlagSet, prefix string, defaults map[string]string, note string) {
	help := func(name, text string) string {
		if d := defaults[name]; d != "" {
			text += " (default " + d + ")"
		}
		return text + note
	}
	f.DurationVar(&l.cpu, prefix+"cpu", 0, help("cpu", "CPU time limit of the whole process tree"))
	f.StringVar(&l.memory, prefix+"memory", "", help("memory", "memory limit of the whole process tree, e.g. 512MiB"))
	f.IntVar(&l.processes, prefix+"processes", 0, help("processes", "most processes and threads alive at once"))
	f.IntVar(&l.nfiles, prefix+"open-files", 0, help("open-files", "most open files per process"))
	f.StringVar(&l.disk, prefix+"disk", "", help("disk", "most bytes written to the workspace, e.g. 1GiB"))
}

// limits parses the flags.
func (l *capFlags) limits() (provider.Limits, error) {
	lim := provider.Limits{CPUTime: l.cpu, Processes: l.processes, OpenFiles: l.nfiles}
	if l.cpu < 0 || l.processes < 0 || l.nfiles < 0 {
		return lim, usage("limits must not be negative")
	}
	var err error
	if lim.Memory, err = parseSize("memory", l.memory); err != nil {
		return lim, err
	}
	lim.Disk, err = parseSize("disk", l.disk)
	return lim, err
}

// runDefaults are the defaults of a run's limits, for help texts.
var runDefaults = map[string]string{"cpu": "10m", "memory": "2GiB", "processes": "1024", "open-files": "4096", "disk": "4GiB"}

// limitFlags are the limits of a run given on the command line.
type limitFlags struct {
	capFlags
	timeout time.Duration
	env     []string
}

// add registers the flags, each name after prefix ("" or "exec-"), each
// help text followed by note.
func (l *limitFlags) add(f *pflag.FlagSet, prefix, note string) {
	f.DurationVar(&l.timeout, prefix+"timeout", 0, "wall time limit (default 60s)"+note)
	l.capFlags.add(f, prefix, runDefaults, note)
	f.StringArrayVar(&l.env, prefix+"env", nil, "environment variable NAME=VALUE, repeatable"+note)
}

// limits parses the flags.
func (l *limitFlags) limits() (provider.Limits, map[string]string, error) {
	if l.timeout < 0 {
		return provider.Limits{}, nil, usage("limits must not be negative")
	}
	lim, err := l.capFlags.limits()
	if err != nil {
		return lim, nil, err
	}
	var env map[string]string
	for _, kv := range l.env {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return lim, nil, usage("env %q: want NAME=VALUE", kv)
		}
		if env == nil {
			env = map[string]string{}
		}
		env[k] = v
	}
	return lim, env, nil
}

// execPolicyFlags are an exec policy given on the command line: --network
// and the caps of a run's limits, each flag's name after prefix.
type execPolicyFlags struct {
	network string
	caps    capFlags
}

func (p *execPolicyFlags) add(f *pflag.FlagSet, prefix, note string) {
	f.StringVar(&p.network, prefix+"network", "", "network: off, full (not the host) or HOST:PORT,... (only those); unset: the server's"+note)
	p.caps.add(f, prefix, nil, " (a cap)"+note)
}

// policy parses the flags.
func (p *execPolicyFlags) parse() (execpolicy.Policy, error) {
	var pol execpolicy.Policy
	if p.network != "" {
		n, err := execpolicy.ParseNetwork(p.network)
		if err != nil {
			return pol, usage("--network: %v", err)
		}
		pol.Network = &n
	}
	var err error
	pol.Limits, err = p.caps.limits()
	return pol, err
}

func execCmd(a *app) *cobra.Command {
	var (
		l       limitFlags
		network string
		root    bool
		mode    string
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
			policy, err := execpolicy.ParseNetwork(network)
			if err != nil {
				return usage("--network: %v", err)
			}
			limits, env, err := l.limits()
			if err != nil {
				return err
			}
			m, err := sandbox.ParseMode(mode)
			if err != nil {
				return usage("--mode: %v", err)
			}
			req := provider.ExecRequest{Command: shellJoin(argv), Timeout: l.timeout, Network: policy.Mode != execpolicy.Off,
				Limits: limits, Env: env}
			a.shell = func(_ context.Context, w *forkspace.Workspace) (httpapi.Shell, error) {
				return sandbox.New(w, sandbox.Options{Audit: a.st.AuditLog(), Network: policy, Root: root, Mode: m}), nil
			}
			ws, err := a.files(ctx)
			if err != nil {
				return err
			}
			if a.remote && root {
				return usage("--root: through a server, commands run as the server decides (serve --exec-root)")
			}
			if a.remote && m != sandbox.ModeAuto {
				return usage("--mode: through a server, commands run as the server decides (serve --exec-mode)")
			}
			stdout, stderr := a.stdout, a.stderr
			if a.json {
				stdout, stderr = nil, nil
			}
			res, err := a.backend.Exec(ctx, ws, req, stdout, stderr)
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
	l.add(c.Flags(), "", "")
	c.Flags().StringVar(&network, "network", "off", "network: off, full (not the host) or HOST:PORT,... (only those)")
	c.Flags().BoolVar(&root, "root", false, "run as uid 0 inside the sandbox (still without capabilities)")
	c.Flags().StringVar(&mode, "mode", "auto", "where /workspace comes from: copy (a materialized work dir), fuse (a FUSE mount of a scratch fork) or auto")
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
		return 0, usage("%s %q: want a size such as 512MiB", flag, v)
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
