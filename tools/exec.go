package tools

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/forkspace/forkspace/provider"
)

type execIn struct {
	Command        string `json:"command" jsonschema:"shell command, run by /bin/sh -c in the workspace root"`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty" jsonschema:"kill the command after this many seconds (default: the shell's)"`
	Network        bool   `json:"network,omitempty" jsonschema:"allow network access (off by default)"`
}

func (s *Set) addExec() {
	add(s, mutating, "exec", "Run a shell command in the workspace (the workspace is the current directory; paths are "+
		"workspace-relative). Returns the exit code, output and the files the command changed.", execTool)
}

func execTool(ctx context.Context, c *call, in execIn) (string, error) {
	sh := c.ws.Shell()
	if sh == nil {
		return "", argError("exec is not available in this workspace (no shell module); use the file tools instead")
	}
	if strings.TrimSpace(in.Command) == "" {
		return "", argError("command is empty")
	}
	if in.TimeoutSeconds < 0 {
		return "", argError("timeout_seconds must not be negative")
	}
	res, err := sh.Exec(ctx, provider.ExecRequest{
		Command:   in.Command,
		Timeout:   time.Duration(in.TimeoutSeconds) * time.Second,
		Network:   in.Network,
		MaxOutput: DefaultExecOutput,
	})
	if err != nil {
		return "", err
	}
	for _, ch := range res.Changed {
		c.changes(ch.Path)
	}
	return formatExec(res), nil
}

func formatExec(res provider.ExecResult) string {
	var b strings.Builder
	if res.TimedOut {
		fmt.Fprintf(&b, "timed out after %s (killed)\n", res.Duration.Round(time.Millisecond))
	} else {
		fmt.Fprintf(&b, "exit code %d (%s)\n", res.ExitCode, res.Duration.Round(time.Millisecond))
	}
	if res.Stdout != "" {
		fmt.Fprintf(&b, "stdout:\n%s\n", strings.TrimSuffix(res.Stdout, "\n"))
	}
	if res.Stderr != "" {
		fmt.Fprintf(&b, "stderr:\n%s\n", strings.TrimSuffix(res.Stderr, "\n"))
	}
	if len(res.Changed) > 0 {
		b.WriteString("changed:\n")
		for _, ch := range res.Changed {
			fmt.Fprintf(&b, "  %s %s\n", ch.Op, ch.Path)
		}
	}
	for _, ch := range res.Dropped {
		fmt.Fprintf(&b, "not kept: %s %s (%s)\n", ch.Op, ch.Path, ch.Reason)
	}
	return strings.TrimSuffix(b.String(), "\n")
}
