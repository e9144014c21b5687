package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/forkspace/forkspace/provider"
	"github.com/forkspace/forkspace/sandbox"
)

// TestExecCLI runs commands through forkspace exec: output streams to
// stdout and stderr, the status and changes follow on stderr, the exit
// status passes through, changes land in the workspace, the audit log
// records the run.
func TestExecCLI(t *testing.T) {
	c := newCLI(t)
	c.ok(nil, "workspace", "create", "w")
	out, errs, code := c.run(nil, "-w", "w", "exec", "--", "sh", "-c", "echo out; echo err >&2; echo data > f; exit 3")
	if code != 3 || out != "out\n" || !strings.HasPrefix(errs, "err\nexit code 3") || !strings.Contains(errs, "created f") {
		t.Errorf("exec: exit %d\nstdout %q\nstderr %q", code, out, errs)
	}
	if got := c.ok(nil, "-w", "w", "cat", "f"); got != "data\n" {
		t.Errorf("f = %q", got)
	}
	out, _, code = c.run(nil, "-w", "w", "exec", "--json", "--", "cat f; exit 5")
	var res provider.ExecResult
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 5 || res.ExitCode != 5 || res.Stdout != "data\n" || res.Mechanism == "" {
		t.Errorf("exec --json: exit %d, %v\n%s", code, err, out)
	}
	_, errs, code = c.run(nil, "-w", "w", "exec", "--disk", "1MiB", "--", "echo x > g; head -c 3000000 /dev/zero > big")
	if code != exitKilled || !strings.Contains(errs, "killed: disk limit 1 MiB") {
		t.Errorf("exec past the disk limit: exit %d\nstderr %q", code, errs)
	}
	c.fails(exitNotFound, nil, "-w", "w", "cat", "g")
	_, errs, code = c.run(nil, "-w", "w", "exec", "--timeout", "1s", "--", "sleep 30")
	if code != exitTimedOut || !strings.Contains(errs, "killed: timeout 1s") {
		t.Errorf("exec past its timeout: exit %d\nstderr %q", code, errs)
	}
	c.fails(exitUsage, nil, "-w", "w", "exec", "--memory", "lots", "--", "true")
	c.fails(exitUsage, nil, "-w", "w", "exec", "--network", "on", "--", "true")
	c.fails(exitUsage, nil, "mcp", "-w", "w", "--network", "host:0")
	// The network policy is the request here: full brings up the
	// sandbox's own interface.
	if out := c.ok(nil, "-w", "w", "exec", "--network", "full", "--", "cat /proc/net/dev"); !strings.Contains(out, "tap0") {
		t.Errorf("exec --network full: %q", out)
	}
	if out := c.ok(nil, "-w", "w", "exec", "--root", "--", "id -u; grep CapEff /proc/self/status"); out != "0\nCapEff:\t0000000000000000\n" {
		t.Errorf("exec --root: %q", out)
	}
	var log []struct{ Tool, Error, Detail string }
	c.json(&log, "log", "-w", "w")
	if len(log) != 6 || !strings.HasPrefix(log[5].Detail, "exit code 3; ") ||
		log[3].Error != "killed: disk limit 1 MiB" || !strings.Contains(log[3].Detail, "MiB peak memory") {
		t.Errorf("audit log: %+v", log)
	}
}

// TestDoctor: doctor reports this host's confinement, and exits non-zero
// only when exec cannot run.
func TestDoctor(t *testing.T) {
	c := newCLI(t)
	var rep sandbox.Report
	c.json(&rep, "doctor")
	names := map[string]bool{}
	for _, ch := range rep.Checks {
		names[ch.Name] = ch.OK
	}
	if !rep.Exec || !names["bubblewrap"] || rep.Limits == "" || len(rep.Checks) < 6 {
		t.Errorf("doctor on a host that runs exec: %+v", rep)
	}
	if out := c.ok(nil, "doctor"); !strings.Contains(out, "limits") || !strings.Contains(out, "bubblewrap") {
		t.Errorf("doctor:\n%s", out)
	}
	cmd := exec.Command(binary, "doctor")
	cmd.Env = append(os.Environ(), "PATH=/nonexistent")
	out, err := cmd.Output()
	if cmd.ProcessState.ExitCode() == 0 || !strings.Contains(string(out), "bubblewrap") {
		t.Errorf("doctor without bubblewrap: %v\n%s", err, out)
	}
}
