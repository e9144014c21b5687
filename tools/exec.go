package tools

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/forkspace/forkspace/provider"
)

type execIn struct {
	Command        string            `json:"command" jsonschema:"shell command, run by /bin/sh -c in the workspace root"`
	TimeoutSeconds int               `json:"timeout_seconds,omitempty" bounds:"0,86400" jsonschema:"kill the command after this many seconds (default 60, at most 3600, unless the operator configured other values; a longer value is lowered to the maximum)"`
	CPUSeconds     int               `json:"cpu_seconds,omitempty" bounds:"0,86400" jsonschema:"kill the command when its processes used this much CPU time in total (default and cap: the server's)"`
	MemoryMiB      int               `json:"memory_mib,omitempty" bounds:"0,1048576" jsonschema:"memory limit of the whole process tree in MiB (default and cap: the server's)"`
	Processes      int               `json:"processes,omitempty" bounds:"0,65536" jsonschema:"most processes and threads alive at once (default and cap: the server's)"`
	OpenFiles      int               `json:"open_files,omitempty" bounds:"0,1048576" jsonschema:"most open files per process (default and cap: the server's)"`
	DiskMiB        int               `json:"disk_mib,omitempty" bounds:"0,1048576" jsonschema:"most MiB the command may add to the workspace; past it the command is killed and none of its changes are kept (default and cap: the server's)"`
	Network        bool              `json:"network,omitempty" jsonschema:"ask for network access: granted only as far as the operator's network policy allows (the narrowest of the server's, the workspace's and the token's; off unless the operator turned it on), never to the host itself"`
	Background     bool              `json:"background,omitempty" jsonschema:"start the command and return its run id at once; follow it with exec_status, exec_tail, exec_output, exec_wait and exec_kill (for runs longer than a client waits for one call; timeout_seconds still applies, so set it for a long build)"`
	Env            map[string]string `json:"env,omitempty" jsonschema:"environment variables for the command, over the server's (which may keep some names); HOME and TMPDIR are scratch directories outside the workspace"`
}

func (s *Set) addExec() {
	add(s, mutating, "exec", "Run a shell command in the workspace (the workspace is the current directory; paths are "+
		"workspace-relative). Returns the exit code or the limit that stopped it, output (head and tail), "+
		"what the run used (CPU, memory, disk) and the files the command changed. While it runs, a client that "+
		"sent a progress token gets progress notifications; for long runs use background and exec_wait.", execTool)
}

func execTool(ctx context.Context, c *call, in execIn) (string, error) {
	sh := c.ws.Shell()
	if sh == nil {
		return "", argError("exec is not available in this workspace (no shell module); use the file tools instead")
	}
	if strings.TrimSpace(in.Command) == "" {
		return "", argError("command is empty")
	}
	if len(in.Env) > maxExecEnv {
		return "", argError("env holds %d variables; at most %d", len(in.Env), maxExecEnv)
	}
	req := provider.ExecRequest{
		Command:   in.Command,
		Env:       in.Env,
		Timeout:   time.Duration(in.TimeoutSeconds) * time.Second,
		Network:   in.Network,
		MaxOutput: DefaultExecOutput,
		Limits: provider.Limits{
			CPUTime:   time.Duration(in.CPUSeconds) * time.Second,
			Memory:    int64(in.MemoryMiB) << 20,
			Processes: in.Processes,
			OpenFiles: in.OpenFiles,
			Disk:      int64(in.DiskMiB) << 20,
		},
	}
	if in.Background {
		return c.set.startRun(ctx, c.ws, sh, req)
	}
	res, err := c.set.execWatched(ctx, sh, req, nil)
	if err != nil {
		return "", err
	}
	for _, ch := range res.Changed {
		c.changes(ch.Path)
	}
	c.detail = res.Ending() + "; " + res.Usage.String()
	return formatExec(res), nil
}

// maxExecEnv caps the variables one exec call may set.
const maxExecEnv = 100

// maxExecChanges caps the changed paths an exec result lists; the rest
// are counted by operation.
const maxExecChanges = 100

func formatExec(res provider.ExecResult) string {
	var b strings.Builder
	b.WriteString(ExecStatus(res))
	if res.Stdout != "" {
		fmt.Fprintf(&b, "stdout:\n%s\n", strings.TrimSuffix(res.Stdout, "\n"))
	}
	if res.Stderr != "" {
		fmt.Fprintf(&b, "stderr:\n%s\n", strings.TrimSuffix(res.Stderr, "\n"))
	}
	b.WriteString(ExecChanges(res))
	return strings.TrimSuffix(b.String(), "\n")
}

// ExecStatus describes how a run ended and what it used, a line each:
// the exit code or the limit that killed it, the usage, the limits that
// refused requests, lingering processes, and a run whose changes were
// not kept.
func ExecStatus(res provider.ExecResult) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s (%s)\nused: %s\n", res.Ending(), res.Duration.Round(time.Millisecond), res.Usage)
	for _, r := range res.Refused {
		fmt.Fprintf(&b, "limit reached: %s\n", r)
	}
	if res.Lingering > 0 {
		fmt.Fprintf(&b, "killed %d lingering processes\n", res.Lingering)
	}
	switch {
	case strings.HasPrefix(res.Killed, "disk limit"):
		b.WriteString("none of the command's changes were kept\n")
	case res.PullError != "":
		b.WriteString(res.PullError + "\n")
	}
	return b.String()
}

// ExecChanges lists the paths a run changed (at most maxExecChanges, the
// rest counted by operation) and those not kept, a line each.
func ExecChanges(res provider.ExecResult) string {
	var b strings.Builder
	if len(res.Changed) > 0 {
		b.WriteString("changed:\n")
		for _, ch := range res.Changed[:min(len(res.Changed), maxExecChanges)] {
			fmt.Fprintf(&b, "  %s %s\n", ch.Op, ch.Path)
		}
		if rest := res.Changed[min(len(res.Changed), maxExecChanges):]; len(rest) > 0 {
			fmt.Fprintf(&b, "  … and %d more (%s)\n", len(rest), countOps(rest))
		}
	}
	for i, ch := range res.Dropped {
		if i == maxExecChanges {
			fmt.Fprintf(&b, "not kept: … and %d more (%s)\n", len(res.Dropped)-i, countOps(res.Dropped[i:]))
			break
		}
		fmt.Fprintf(&b, "not kept: %s %s (%s)\n", ch.Op, ch.Path, ch.Reason)
	}
	return b.String()
}

// countOps summarizes changes by operation ("12 created, 3 deleted").
func countOps(chs []provider.Change) string {
	var ops []string
	n := map[string]int{}
	for _, ch := range chs {
		if n[ch.Op] == 0 {
			ops = append(ops, ch.Op)
		}
		n[ch.Op]++
	}
	parts := make([]string, len(ops))
	for i, op := range ops {
		parts[i] = fmt.Sprintf("%d %s", n[op], op)
	}
	return strings.Join(parts, ", ")
}
