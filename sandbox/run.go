package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/forkspace/forkspace/execpolicy"
	"github.com/forkspace/forkspace/provider"
)

// MountPoint is where the work directory appears inside the sandbox: the
// command's working directory.
const MountPoint = "/workspace"

// sandboxPath is the PATH commands run with.
const sandboxPath = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"

// run is one confined command: its arguments and how it ended.
type run struct {
	bwrap   string
	workDir string
	etcDir  string // holds the sandbox's passwd and group files
	req     provider.ExecRequest
	root    bool // uid 0 inside the user namespace (Options.Root)
	// hostUID is the host uid (and gid) bubblewrap and the command run as
	// (a root server's lease); 0: forkspace's own.
	hostUID int
	net     *netRun // nil: no network but the sandbox's own loopback
	// network is the run's network policy (used when req.Network).
	network execpolicy.Network
	timeout time.Duration
	max     int
	limits  provider.Limits
	// cg is where the run's cgroup is created (mech "": rlimits only).
	cg cgroupBase
	// disk measures the work dir's growth (nil: not measured while it
	// runs).
	disk meter
	// stream receives stdout and stderr as they come (nil: not copied).
	stream [2]io.Writer
	// opEnv is the operator's environment (Options.Env); requests may not
	// set the names in lockEnv.
	opEnv   map[string]string
	lockEnv []string
}

// outcome is how a confined command ended.
type outcome struct {
	exitCode       int
	stdout, stderr string
	timedOut       bool
	killed         string // the limit that stopped the run
	diskExceeded   bool   // the disk limit stopped it: nothing is pulled back
	refused        []string
	lingering      int
	usage          provider.Usage
	mech           string
}

// hostDirs are the top-level system directories made visible read-only:
// bound when they are directories, recreated when they are symbolic links
// (merged-/usr systems).
var hostDirs = []string{"/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc/alternatives"}

// hostEtc are host files the dynamic linker and common tools read; they
// hold no secrets. /etc/passwd and /etc/group are synthesized instead.
var hostEtc = []string{"/etc/ld.so.cache", "/etc/ld.so.conf", "/etc/ld.so.conf.d", "/etc/localtime", "/etc/nsswitch.conf"}

// netEtc are host directories bound only when the command has the
// network; /etc/resolv.conf and /etc/hosts are synthesized (netRun).
var netEtc = []string{"/etc/ssl", "/etc/ca-certificates"}

// The descriptors bwrap's command line names: files() in this order,
// passed as cmd.ExtraFiles from fd 3 on.
const (
	seccompFD = 3 // the seccomp filter
	infoFD    = 4 // bwrap reports its child's pid (with the network)
	blockFD   = 5 // holds the command until its network is up
)

// uid is the uid and gid the command runs as inside the user namespace.
func (r *run) uid() int {
	if r.root {
		return 0
	}
	return SandboxUID
}

// files returns the descriptors bwrap's command line refers to, from fd
// 3 on (seccompFD...): the seccomp filter (a pipe holding the whole
// program) and, with the network, the info and block pipes that the
// network's attach goroutine, started here, serves. The caller closes
// them once bwrap started.
func (r *run) files() ([]*os.File, error) {
	prog, err := seccompProgram()
	if err != nil {
		return nil, fmt.Errorf("exec: %w: %w", ErrUnconfined, err)
	}
	rd, wr, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("exec: %w", err)
	}
	_, err = wr.Write(prog) // a few hundred bytes: within the pipe's buffer
	if err = errors.Join(err, wr.Close()); err != nil {
		rd.Close()
		return nil, fmt.Errorf("exec: write seccomp filter: %w", err)
	}
	if r.net == nil {
		return []*os.File{rd}, nil
	}
	infoR, infoW, err := os.Pipe()
	if err != nil {
		rd.Close()
		return nil, fmt.Errorf("exec: %w", err)
	}
	blockR, blockW, err := os.Pipe()
	if err != nil {
		closeAll([]*os.File{rd, infoR, infoW})
		return nil, fmt.Errorf("exec: %w", err)
	}
	r.net.start(infoR, blockW)
	return []*os.File{rd, infoW, blockR}, nil
}

// args returns bwrap's command line. The command runs in its own user
// namespace as r.uid(), mapped to the uid forkspace runs as and nothing
// else, with every capability dropped (in the namespace too, so Root is
// uid 0 without power), no further user namespaces, and the seccomp
// filter. /proc/sys is read-only: sysctl files check the owner uid, not
// a capability, and the namespace's uid maps to root when forkspace runs
// as root.
func (r *run) args() []string {
	id := strconv.Itoa(r.uid())
	a := []string{"--unshare-all", "--unshare-user", "--disable-userns", "--uid", id, "--gid", id,
		"--cap-drop", "ALL", "--seccomp", strconv.Itoa(seccompFD),
		"--die-with-parent", "--new-session", "--hostname", "sandbox"}
	if r.net != nil {
		a = append(a, "--info-fd", strconv.Itoa(infoFD), "--block-fd", strconv.Itoa(blockFD),
			"--ro-bind", filepath.Join(r.etcDir, "resolv.conf"), "/etc/resolv.conf",
			"--ro-bind", filepath.Join(r.etcDir, "hosts"), "/etc/hosts")
	}
	for _, d := range hostDirs {
		fi, err := os.Lstat(d)
		switch {
		case err != nil:
		case fi.Mode()&fs.ModeSymlink != 0:
			if target, err := os.Readlink(d); err == nil {
				a = append(a, "--symlink", target, d)
			}
		case fi.IsDir():
			a = append(a, "--ro-bind", d, d)
		}
	}
	etc := hostEtc
	if r.net != nil {
		etc = append(etc[:len(etc):len(etc)], netEtc...)
	}
	for _, f := range etc {
		a = append(a, "--ro-bind-try", f, f)
	}
	a = append(a,
		"--ro-bind", filepath.Join(r.etcDir, "passwd"), "/etc/passwd",
		"--ro-bind", filepath.Join(r.etcDir, "group"), "/etc/group",
		"--proc", "/proc", "--ro-bind", "/proc/sys", "/proc/sys", "--dev", "/dev")
	a = append(a, r.scratchArgs()...)
	a = append(a, "--bind", r.workDir, MountPoint, "--chdir", MountPoint, "--remount-ro", "/",
		"/bin/sh", "-c", r.req.Command)
	return a
}

// env returns the scrubbed environment: the defaults (PATH, HOME,
// TMPDIR, LANG), the operator's Options.Env over them, and the request's
// variables over those, except the names Options.LockEnv keeps.
func (r *run) env() ([]string, error) {
	vars := map[string]string{"PATH": sandboxPath, "HOME": ScratchHome, "TMPDIR": "/tmp", "LANG": "C.UTF-8"}
	maps.Copy(vars, r.opEnv)
	for k, v := range r.req.Env {
		if err := checkEnv(k, v); err != nil {
			return nil, err
		}
		if slices.Contains(r.lockEnv, k) {
			return nil, fmt.Errorf("exec: environment variable %s is set by the server: %w", k, fs.ErrPermission)
		}
		vars[k] = v
	}
	env := make([]string, 0, len(vars))
	for k, v := range vars {
		env = append(env, k+"="+v)
	}
	sort.Strings(env)
	return env, nil
}

// start runs the command to completion under its limits (supervise.go).
func (r *run) start(ctx context.Context) (outcome, error) {
	return r.supervise(ctx)
}

// closeAll closes files.
func closeAll(files []*os.File) {
	for _, f := range files {
		f.Close()
	}
}

// writeEtc writes the sandbox's /etc/passwd and /etc/group into dir: root,
// sandbox (SandboxUID) and nobody, with home MountPoint. Nothing of the
// host's account database is exposed.
func writeEtc(dir string) error {
	passwd := "root:x:0:0:root:" + MountPoint + ":/bin/sh\n" +
		fmt.Sprintf("sandbox:x:%d:%d:sandbox:%s:/bin/sh\n", SandboxUID, SandboxUID, MountPoint) +
		"nobody:x:65534:65534:nobody:/nonexistent:/usr/sbin/nologin\n"
	group := "root:x:0:\n" + fmt.Sprintf("sandbox:x:%d:\n", SandboxUID) + "nogroup:x:65534:\n"
	return writeEtcFiles(dir, map[string]string{"passwd": passwd, "group": group})
}

// writeEtcFiles writes the sandbox's /etc files (name → content) into
// dir, leaving files that already hold their content.
func writeEtcFiles(dir string, files map[string]string) error {
	for name, body := range files {
		p := filepath.Join(dir, name)
		if old, err := os.ReadFile(p); err == nil && string(old) == body {
			continue
		}
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			return fmt.Errorf("write sandbox /etc/%s: %w", name, err)
		}
	}
	return nil
}
