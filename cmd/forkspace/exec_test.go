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

// TestExecPolicyLevels: through a running server whose policy is full
// network, a run gets the narrowest of the server's, the workspace's and
// the token's policy. A workspace allowlist narrows the server (no DNS,
// its memory cap); a token with the network off gets none, whatever the
// server and the workspace allow; such a token can neither widen a
// workspace's policy nor mint a token with more; bad policies are usage
// errors and change nothing.
func TestExecPolicyLevels(t *testing.T) {
	c := newCLI(t)
	c.ok(nil, "workspace", "create", "w")
	c.ok(nil, "workspace", "create", "v")
	admin := strings.TrimSpace(c.ok(nil, "token", "create", "--tenant", "*", "--perm", "all"))
	offAdmin := strings.TrimSpace(c.ok(nil, "token", "create", "--perm", "all", "--exec-network", "off"))
	c.fails(exitUsage, nil, "token", "create", "--perm", "exec", "--exec-network", "on")
	c.fails(exitUsage, nil, "token", "create", "--perm", "exec", "--exec-memory", "lots")
	c.ok(nil, "workspace", "policy", "w", "--exec-network", "192.0.2.7:443", "--exec-memory", "300MiB")
	c.fails(exitUsage, nil, "workspace", "policy", "w", "--exec-network", "192.0.2.7:0")
	c.fails(exitUsage, nil, "workspace", "policy", "w", "--exec-processes", "-1")
	if out := c.ok(nil, "workspace", "policy", "w"); out != "exec policy of w: network 192.0.2.7:443, memory ≤ 314572800\n" {
		t.Errorf("policy after refused changes: %q", out)
	}

	_, stop := serve(t, c.store, "--network", "full")
	defer stop()
	resolv := "cat /etc/resolv.conf"
	if out := c.ok(nil, "--token", admin, "-w", "v", "exec", "--network", "full", "--", resolv); !strings.Contains(out, "nameserver") {
		t.Errorf("a full server without workspace or token policy: resolv.conf %q", out)
	}
	var res provider.ExecResult
	out, errs, code := c.run(nil, "--token", admin, "-w", "w", "exec", "--json", "--network", "full", "--memory", "1GiB", "--", resolv+"; cat /etc/hosts")
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 0 || strings.Contains(res.Stdout, "nameserver") || res.Limits.Memory != 300<<20 {
		t.Errorf("the workspace's allowlist under a full server: exit %d %v, memory %d\n%s%s", code, err, res.Limits.Memory, res.Stdout, errs)
	}
	for _, ws := range []string{"v", "w"} {
		msg := c.fails(exitReadOnly, nil, "--token", offAdmin, "-w", ws, "exec", "--network", "full", "--", "touch ran")
		if !strings.Contains(msg, "network access is off") {
			t.Errorf("token with the network off, in %s: %q", ws, msg)
		}
		c.fails(exitNotFound, nil, "--token", admin, "-w", ws, "cat", "ran")
	}
	c.ok(nil, "--token", offAdmin, "-w", "v", "exec", "--", "true")
	c.fails(exitReadOnly, nil, "--token", offAdmin, "workspace", "policy", "v", "--exec-network", "full")
	c.fails(exitReadOnly, nil, "--token", offAdmin, "token", "create", "--perm", "exec", "--exec-network", "full")
	if out := c.ok(nil, "--token", admin, "workspace", "policy", "v"); out != "exec policy of v: none\n" {
		t.Errorf("v's policy after a refused widening: %q", out)
	}
	c.ok(nil, "--token", admin, "workspace", "policy", "w", "--clear")
	if out := c.ok(nil, "--token", admin, "-w", "w", "exec", "--network", "full", "--", resolv); !strings.Contains(out, "nameserver") {
		t.Errorf("after clearing w's policy: resolv.conf %q", out)
	}
}

// TestExecModes: exec --mode fuse runs on a FUSE mount of a scratch fork
// and pulls the command's changes back like the materialized mode; a bad
// mode is a usage error on exec, mcp and serve.
func TestExecModes(t *testing.T) {
	c := newCLI(t)
	c.ok(nil, "workspace", "create", "w")
	c.ok([]byte("before\n"), "-w", "w", "put", "-", "a")
	for _, mode := range []string{"fuse", "copy", "auto"} {
		out, errs, code := c.run(nil, "-w", "w", "exec", "--mode", mode, "--", "cat a; echo "+mode+" > "+mode+"; rm -f gone; touch gone")
		if code != 0 || out != "before\n" || !strings.Contains(errs, "created "+mode) {
			t.Errorf("exec --mode %s: exit %d\nstdout %q\nstderr %q", mode, code, out, errs)
		}
		if got := c.ok(nil, "-w", "w", "cat", mode); got != mode+"\n" {
			t.Errorf("%s = %q", mode, got)
		}
	}
	c.fails(exitUsage, nil, "-w", "w", "exec", "--mode", "sideways", "--", "true")
	c.fails(exitUsage, nil, "mcp", "-w", "w", "--exec-mode", "sideways")
	c.fails(exitUsage, nil, "serve", "--exec-mode", "sideways")
}
