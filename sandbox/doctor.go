package sandbox

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/forkspace/forkspace/provider"
)

// Check is one item of what Doctor found.
type Check struct {
	Name string `json:"name"`
	OK   bool   `json:"ok"`
	// Detail says what was found, or what is missing and what that costs.
	Detail string `json:"detail"`
}

// Report is the confinement this host offers exec.
type Report struct {
	Checks []Check `json:"checks"`
	// Limits names the mechanism limits are enforced with ("cgroup v2",
	// "cgroup v1" or "rlimit").
	Limits string `json:"limits"`
	// Exec is set when a confined command ran; ExecError says why not.
	Exec      bool   `json:"exec"`
	ExecError string `json:"exec_error,omitempty"`
}

// Doctor probes what confinement this host offers: bubblewrap, user
// namespaces, cgroups (v2 with delegation, or v1), seccomp, user-mode
// networking (slirp4netns, pasta), FUSE; then runs a confined probe
// command with opts' bubblewrap (every check an Exec makes before its
// first command).
func Doctor(ctx context.Context, opts Options) Report {
	var rep Report
	add := func(name string, ok bool, format string, args ...any) {
		rep.Checks = append(rep.Checks, Check{Name: name, OK: ok, Detail: fmt.Sprintf(format, args...)})
	}
	bwrap, err := exec.LookPath(cmpOr(opts.Bwrap, "bwrap"))
	if err != nil {
		add("bubblewrap", false, "not found (Debian package bubblewrap): exec cannot run")
	} else {
		v, _ := exec.CommandContext(ctx, bwrap, "--version").Output()
		add("bubblewrap", true, "%s (%s)", bwrap, strings.TrimSpace(string(v)))
	}
	max := strings.TrimSpace(readString("/proc/sys/user/max_user_namespaces"))
	add("user namespaces", max != "" && max != "0", "max_user_namespaces %s", cmpOr(max, "unknown"))
	cg := hostCgroups()
	switch {
	case opts.NoCgroups:
		add("cgroups", cg.mech != "", "%s available, but disabled by the configuration", cmpOr(cg.mech, "none"))
	case cg.mech != "":
		add("cgroups", true, "%s: a group per run under %s", cg.mech, strings.Join(slices.Compact([]string{cg.memory, cg.pids, cg.cpu}), ", "))
	default:
		add("cgroups", false, "none usable (%s): limits fall back to rlimits (memory per process; processes per run's host uid)", cg.why)
	}
	if hostUIDs() {
		p, err := exec.LookPath("setpriv")
		add("host uid", err == nil, "forkspace runs as root: each run in flight gets its own host uid of %d-%d (group %d, setpriv %s), the sandbox's uid maps to it",
			HostUIDBase, HostUIDBase+HostUIDCount-1, HostGID, cmpOr(p, "not found: Debian package util-linux"))
	} else {
		add("host uid", true, "the sandbox's uid maps to forkspace's own, %d", os.Getuid())
	}
	rep.Limits = mechRlimit
	if cg.mech != "" && !opts.NoCgroups {
		rep.Limits = cg.mech
	}
	seccomp := statusField(readString("/proc/self/status"), "Seccomp")
	add("seccomp", seccomp != "", "Seccomp field %s in /proc/self/status", cmpOr(seccomp, "missing"))
	for _, n := range []string{"slirp4netns", "pasta"} {
		p, err := exec.LookPath(n)
		add(n, err == nil, "%s", cmpOr(p, "not found (user-mode networking for sandboxes)"))
	}
	_, ferr := os.Stat("/dev/fuse")
	fm, merr := exec.LookPath("fusermount3")
	add("fuse", ferr == nil && merr == nil, "/dev/fuse %s, fusermount3 %s", found(ferr == nil), cmpOr(fm, "not found"))
	if bwrap != "" {
		rep.Exec, rep.ExecError = probeExec(ctx, bwrap, opts)
	} else {
		rep.ExecError = "bubblewrap not found"
	}
	return rep
}

// probeExec runs the confinement probe in a scratch work dir.
func probeExec(ctx context.Context, bwrap string, opts Options) (bool, string) {
	dir, err := os.MkdirTemp("", "forkspace-doctor-")
	if err != nil {
		return false, err.Error()
	}
	defer os.RemoveAll(dir)
	work := filepath.Join(dir, "work")
	if err := os.Mkdir(work, 0o700); err != nil {
		return false, err.Error()
	}
	if err := writeEtc(dir); err != nil {
		return false, err.Error()
	}
	r := &run{bwrap: bwrap, workDir: work, etcDir: dir, root: opts.Root, timeout: 30 * time.Second, max: 64 << 10,
		limits: orDefault(opts.Limits, DefaultLimits), req: provider.ExecRequest{Command: "true"}}
	if !opts.NoCgroups {
		r.cg = hostCgroups()
	}
	if hostUIDs() {
		l, err := leaseUID(work)
		if err != nil {
			return false, err.Error()
		}
		defer l.release()
		if err := errors.Join(searchable(dir), chownTree(work, l.uid)); err != nil {
			return false, err.Error()
		}
		r.hostUID = l.uid
	}
	if err := r.verify(ctx); err != nil {
		return false, err.Error()
	}
	return true, ""
}

func readString(name string) string {
	b, _ := os.ReadFile(name)
	return string(b)
}

// statusField returns a field of /proc/<pid>/status.
func statusField(status, name string) string {
	for line := range strings.Lines(status) {
		if k, v, ok := strings.Cut(line, ":"); ok && k == name {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func found(ok bool) string {
	if ok {
		return "present"
	}
	return "missing"
}
