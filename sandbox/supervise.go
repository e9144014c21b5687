package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// pollEvery is how often a running command's cgroup counters are read.
const pollEvery = 100 * time.Millisecond

// drainWait bounds how long output is read after bubblewrap exited: a
// process that escaped the kill and holds the pipes open cannot make the
// run lose what it already wrote.
const drainWait = time.Second

// runSeq numbers the runs of this process (cgroup names).
var runSeq atomic.Uint64

// gateScript starts bubblewrap once its limits are in place and stays
// its parent, so that no run outlives its server. The shell reads "go"
// from descriptor fd (after those bwrap's command line refers to) when the
// parent has applied the rlimits and cgroup, which every process of the
// run inherits; end of file instead means the server died, and nothing
// starts. It gets SIGTERM when the server dies (parent-death signal) and
// then kills bubblewrap and bubblewrap's child, the init of the run's pid
// namespace, which takes every process of the command with it:
// bubblewrap's own --die-with-parent is lost when the child changes its
// uid, so the command used to outlive a server killed with SIGKILL.
//
// With a host uid of the run's own (uidKill, a command line run as that
// uid, non-empty), the trap first kills every process of that uid: the
// uid is leased to this run alone, so that is exactly the run, whatever
// moment the signal lands in — before bubblewrap's pid is known, or
// before /proc lists its child (TestNoOrphans saw both under load).
func gateScript(fd int, uidKill string) string {
	return fmt.Sprintf(`trap '%[2]s kill -KILL $(cat /proc/$b/task/$b/children 2>/dev/null) $b 2>/dev/null; exit 137' TERM
b=
read g <&%[1]d && [ "$g" = go ] || exit 125
"$0" "$@" %[1]d<&- &
b=$!
wait $b`, fd, uidKill)
}

// killTree kills pid's children and grandchildren (the gate's bubblewrap
// and the init of its pid namespace, whose death ends every process in
// it), then pid's process group.
func killTree(pid int) {
	for _, c := range children(pid) {
		for _, gc := range children(c) {
			syscall.Kill(gc, syscall.SIGKILL)
		}
		syscall.Kill(c, syscall.SIGKILL)
	}
	syscall.Kill(-pid, syscall.SIGKILL)
}

// children lists the child processes of pid.
func children(pid int) []int {
	data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/task/%[1]d/children", pid))
	var pids []int
	for f := range strings.FieldsSeq(string(data)) {
		if c, err := strconv.Atoi(f); err == nil {
			pids = append(pids, c)
		}
	}
	return pids
}

// supervise starts bubblewrap behind the gate, applies the limits, and
// waits for it while polling the cgroup (CPU time, process count) and the
// work dir's growth. A limit crossed, the timeout or ctx done kill the
// whole run: bubblewrap's process group and every process of its cgroup.
func (r *run) supervise(ctx context.Context) (outcome, error) {
	env, err := r.env()
	if err != nil {
		return outcome{}, err
	}
	out := outcome{mech: mechRlimit}
	var cg *cgroup
	if r.cg.mech != "" {
		if cg, err = r.cg.newRun(runGroupName(runSeq.Add(1)), r.limits); err != nil {
			return outcome{}, err
		}
		defer cg.remove()
		out.mech = r.cg.mech
	}
	files, err := r.files()
	if err != nil {
		return outcome{}, err
	}
	defer closeAll(files)
	gateR, gateW, err := os.Pipe()
	if err != nil {
		return outcome{}, fmt.Errorf("exec: %w", err)
	}
	defer gateR.Close()
	defer gateW.Close()
	stdout, stderr := &capped{max: r.max}, &capped{max: r.max}
	outR, outW, err := os.Pipe()
	if err != nil {
		return outcome{}, fmt.Errorf("exec: %w", err)
	}
	errR, errW, err := os.Pipe()
	if err != nil {
		outR.Close()
		outW.Close()
		return outcome{}, fmt.Errorf("exec: %w", err)
	}
	argv := append([]string{r.bwrap}, r.args()...)
	uidKill := ""
	if r.hostUID != 0 {
		// bubblewrap and the command run as the run's own host uid (the
		// user namespace maps the sandbox's uid to it); the gate stays
		// forkspace's, so the rlimits set on it need no capability.
		setpriv, err := exec.LookPath("setpriv")
		if err != nil {
			return outcome{}, fmt.Errorf("exec: %w: setpriv (Debian package util-linux) not found: %w", ErrUnconfined, err)
		}
		id := strconv.Itoa(r.hostUID)
		argv = append([]string{setpriv, "--reuid=" + id, "--regid=" + id, "--groups=" + strconv.Itoa(HostGID), "--"}, argv...)
		// kill(-1) as the run's uid signals every process of it but the
		// caller.
		uidKill = setpriv + " --reuid=" + id + " --regid=" + id + " --clear-groups -- /bin/sh -c \"kill -KILL -1\" 2>/dev/null;"
	}
	cmd := exec.Command("/bin/sh", append([]string{"-c", gateScript(3+len(files), uidKill)}, argv...)...)
	cmd.Env, cmd.Stdout, cmd.Stderr = env, outW, errW // stdin: /dev/null
	cmd.ExtraFiles = append(files, gateR)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGTERM}
	err = cmd.Start()
	outW.Close()
	errW.Close()
	if err != nil {
		outR.Close()
		errR.Close()
		return outcome{}, fmt.Errorf("exec: run bwrap: %w", err)
	}
	var drained sync.WaitGroup
	for i, p := range []struct {
		r *os.File
		w io.Writer
	}{{outR, stdout}, {errR, stderr}} {
		w := p.w
		if r.stream[i] != nil {
			w = io.MultiWriter(p.w, errorless{r.stream[i]})
		}
		drained.Go(func() { io.Copy(w, p.r) })
	}
	pid := cmd.Process.Pid
	killAll := func() {
		killTree(pid)
		if cg != nil {
			cg.kill()
		}
	}
	err = setRlimits(pid, rlimits(r.limits, cg == nil))
	if err == nil && cg != nil {
		err = cg.join(pid)
	}
	gateR.Close()
	if err != nil {
		killAll()
	} else if _, err = io.WriteString(gateW, "go\n"); err != nil {
		killAll()
		err = fmt.Errorf("exec: open the gate: %w", err)
	}
	gateW.Close()
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()

	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	var werr error
	done := ctx.Done()
loop:
	for {
		select {
		case werr = <-waited:
			break loop
		case <-done:
			done = nil
			killAll()
			if errors.Is(ctx.Err(), context.DeadlineExceeded) {
				out.timedOut, out.killed = true, fmt.Sprintf("timeout %s", r.timeout)
			}
		case now := <-tick.C:
			if reason := r.check(cg, &out, now); reason != "" && out.killed == "" {
				out.killed = reason
				killAll()
			}
		}
	}
	if err != nil { // the gate could not apply the limits
		return out, err
	}
	if cg != nil {
		out.lingering = cg.kill()
		s := cg.stats()
		out.usage.CPUTime, out.usage.PeakMemory = s.cpu, s.peak
		out.usage.Processes = max(out.usage.Processes, s.pids)
		if s.oomKills > 0 && out.killed == "" {
			out.killed = "memory limit " + size(r.limits.Memory)
		}
		if s.pidsLimit > 0 {
			out.refused = append(out.refused, fmt.Sprintf("process limit %d: %d forks refused", r.limits.Processes, s.pidsLimit))
		}
	}
	if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok && cg == nil {
		out.usage.CPUTime = time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
		out.usage.PeakMemory = ru.Maxrss << 10
	}
	drainedCh := make(chan struct{})
	go func() { drained.Wait(); close(drainedCh) }()
	select {
	case <-drainedCh:
	case <-time.After(drainWait):
		outR.Close()
		errR.Close()
		<-drainedCh
	}
	outR.Close()
	errR.Close()
	out.stdout, out.stderr = stdout.String(), stderr.String()
	var exitErr *exec.ExitError
	switch {
	case out.killed != "":
		out.exitCode = -1
	case ctx.Err() != nil:
		return out, fmt.Errorf("exec: %w", ctx.Err())
	case errors.As(werr, &exitErr):
		out.exitCode = exitErr.ExitCode()
		out.killed = r.signalled(exitErr)
	case werr != nil:
		return out, fmt.Errorf("exec: run bwrap: %w", werr)
	}
	return out, nil
}

// check reads the run's counters while it runs and returns the limit it
// crossed, if any.
func (r *run) check(cg *cgroup, out *outcome, now time.Time) string {
	if cg != nil {
		s := cg.stats()
		out.usage.Processes = max(out.usage.Processes, s.pids)
		if r.limits.CPUTime > 0 && s.cpu > r.limits.CPUTime {
			return "CPU limit " + r.limits.CPUTime.String()
		}
	}
	if r.disk != nil {
		if n, due := r.disk.growth(now); due && n > r.limits.Disk {
			out.diskExceeded = true
			return "disk limit " + size(r.limits.Disk)
		}
	}
	return ""
}

// signalled names the per-process limit whose signal ended the run:
// bubblewrap reports a command killed by signal N as exit status 128+N.
// (A file cut at the disk limit is found by the scan after the run.)
func (r *run) signalled(e *exec.ExitError) string {
	switch e.ExitCode() {
	case 128 + int(syscall.SIGXCPU):
		return "CPU limit " + r.limits.CPUTime.String() + " (one process)"
	}
	return ""
}

// errorless ignores the errors of a stream's writer: a closed terminal
// must not stop the copy into the result.
type errorless struct{ w io.Writer }

func (e errorless) Write(p []byte) (int, error) {
	e.w.Write(p)
	return len(p), nil
}
