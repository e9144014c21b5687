package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/forkspace/forkspace/internal/citest"
	"github.com/forkspace/forkspace/provider"
)

// execReq runs req and fails the test on error.
func execReq(t testing.TB, s *Shell, req provider.ExecRequest) provider.ExecResult {
	t.Helper()
	res, err := s.Exec(context.Background(), req)
	if err != nil {
		t.Fatalf("Exec(%q): %v", req.Command, err)
	}
	return res
}

// mechanisms are the ways limits can be enforced on this host: cgroups
// when this process may create them, and always the rlimit fallback.
func mechanisms(t *testing.T) map[string]Options {
	m := map[string]Options{mechRlimit: {NoCgroups: true}}
	if b := hostCgroups(); b.mech != "" {
		m[b.mech] = Options{}
	} else {
		t.Logf("no cgroups: %s", b.why)
	}
	return m
}

// needCgroups fails (CI) or skips the test when this process cannot
// create cgroups.
func needCgroups(t *testing.T) {
	t.Helper()
	if b := hostCgroups(); b.mech == "" {
		citest.Missing(t, "no cgroup this process may create (%s): run as root or with a delegated cgroup", b.why)
	}
}

// TestLingeringChildren: children a command leaves running end with its
// run. How many the result counts depends on a race: the end of the
// sandbox's pid namespace kills them too, and those it reaped before the
// run's group is read are not counted; none outlives the run either way.
func TestLingeringChildren(t *testing.T) {
	s, _ := newShell(t, Options{})
	const marker = "4242.5"
	res := execReq(t, s, provider.ExecRequest{Command: "for i in $(seq 100); do sleep " + marker + " & done; echo started", Timeout: time.Minute})
	if res.ExitCode != 0 || res.Stdout != "started\n" || res.TimedOut || res.Killed != "" || res.Lingering > 100 {
		t.Errorf("result %+v", res)
	}
	t.Logf("%d lingering processes counted", res.Lingering)
	if n := hostProcesses(t, "sleep\x00"+marker+"\x00"); n > 0 {
		t.Errorf("%d of the command's children outlived the run", n)
	}
}

// hostProcesses counts the host's live processes whose command line is
// cmdline (NUL-separated, as /proc/PID/cmdline).
func hostProcesses(t *testing.T, cmdline string) int {
	t.Helper()
	dirs, err := os.ReadDir("/proc")
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range dirs {
		pid, err := strconv.Atoi(d.Name())
		if err != nil {
			continue
		}
		data, err := os.ReadFile(filepath.Join("/proc", d.Name(), "cmdline"))
		if err == nil && string(data) == cmdline && commandProc(pid) {
			n++
		}
	}
	return n
}

// TestForkBomb runs a fork bomb under a process limit while another
// workspace's shell keeps answering.
func TestForkBomb(t *testing.T) {
	needCgroups(t)
	bomb, _ := newShell(t, Options{})
	other, _ := newShell(t, Options{})
	var res provider.ExecResult
	var wg sync.WaitGroup
	wg.Go(func() {
		res = execReq(t, bomb, provider.ExecRequest{Command: "b() { b | b & }; b; sleep 5",
			Timeout: 4 * time.Second, Limits: provider.Limits{Processes: 64}})
	})
	for i := range 3 {
		r := execReq(t, other, provider.ExecRequest{Command: fmt.Sprintf("echo alive %d", i)})
		if r.Stdout != fmt.Sprintf("alive %d\n", i) {
			t.Errorf("other workspace during the bomb: %+v", r)
		}
	}
	wg.Wait()
	if !res.TimedOut || res.Usage.Processes > 64 || len(res.Refused) == 0 || !strings.Contains(res.Refused[0], "process limit 64") {
		t.Errorf("fork bomb result: killed %q refused %q usage %+v", res.Killed, res.Refused, res.Usage)
	}
}

// TestMemoryLimit allocates 4 GiB under a 256 MiB limit.
func TestMemoryLimit(t *testing.T) {
	for mech, opts := range mechanisms(t) {
		t.Run(mech, func(t *testing.T) {
			s, _ := newShell(t, opts)
			res := execReq(t, s, provider.ExecRequest{Command: `perl -e '$x = "x" x (4 << 30); print "allocated\n"'`,
				Timeout: time.Minute, Limits: provider.Limits{Memory: 256 << 20}})
			if res.ExitCode == 0 || strings.Contains(res.Stdout, "allocated") || res.Mechanism != mech {
				t.Fatalf("4 GiB allocation under 256 MiB: %+v", res)
			}
			if res.Usage.PeakMemory > 300<<20 {
				t.Errorf("peak memory %d above the limit", res.Usage.PeakMemory)
			}
			if mech != mechRlimit && res.Killed != "memory limit 256 MiB" {
				t.Errorf("killed %q, want the memory limit", res.Killed)
			}
		})
	}
}

// TestCPULimit runs an endless loop under a CPU time limit.
func TestCPULimit(t *testing.T) {
	for mech, opts := range mechanisms(t) {
		t.Run(mech, func(t *testing.T) {
			s, _ := newShell(t, opts)
			res := execReq(t, s, provider.ExecRequest{Command: "while :; do :; done",
				Timeout: 2 * time.Minute, Limits: provider.Limits{CPUTime: time.Second}})
			// rlimit: the usage is what the kernel reports for the processes
			// bubblewrap waited for, not the whole tree.
			if res.TimedOut || !strings.HasPrefix(res.Killed, "CPU limit 1s") || (mech != mechRlimit && res.Usage.CPUTime < time.Second/2) {
				t.Errorf("endless loop under 1s of CPU: killed %q usage %+v", res.Killed, res.Usage)
			}
		})
	}
}

// TestDiskLimit writes past the disk limit: the run is stopped, nothing
// it wrote is pulled back, and the work dir is rid of it.
func TestDiskLimit(t *testing.T) {
	for _, mode := range modes {
		t.Run(string(mode), func(t *testing.T) { diskLimit(t, mode) })
	}
}

func diskLimit(t *testing.T, mode Mode) {
	for mech, opts := range mechanisms(t) {
		opts.Mode = mode
		for name, cmd := range map[string]string{
			"files":    "for i in 1 2 3; do head -c 600000 /dev/zero > f$i; done; echo > after",
			"one file": "head -c 3000000 /dev/zero > big; echo > after",
			"slow":     "while :; do head -c 100000 /dev/zero > f$(date +%s%N); sleep 0.05; done",
		} {
			t.Run(mech+"/"+name, func(t *testing.T) {
				s, ws := newShell(t, opts)
				writeWS(t, ws, "kept", "acknowledged", 0o644)
				res := execReq(t, s, provider.ExecRequest{Command: "echo changed > kept; " + cmd,
					Timeout: time.Minute, Limits: provider.Limits{Disk: 1 << 20}})
				if !strings.HasPrefix(res.Killed, "disk limit 1 MiB") || len(res.Changed) != 0 {
					t.Fatalf("writing past 1 MiB: killed %q changed %v usage %+v", res.Killed, res.Changed, res.Usage)
				}
				if got, _ := readWS(t, ws, "kept"); got != "acknowledged" {
					t.Errorf("kept = %q: the run's changes were pulled back", got)
				}
				if mode == ModeFUSE {
					sameTree(t, s, ws) // nothing left behind
					return
				}
				ents, _ := os.ReadDir(s.WorkDir())
				if len(ents) != 1 {
					t.Errorf("work dir after the run holds %d entries, want only kept", len(ents))
				}
				if b, _ := os.ReadFile(filepath.Join(s.WorkDir(), "kept")); string(b) != "acknowledged" {
					t.Errorf("work dir kept = %q", b)
				}
			})
		}
	}
}

// TestScratchOutsideWorkspace: what tools write under HOME and TMPDIR
// never reaches the workspace (npm's logs once landed in checkpoints).
func TestScratchOutsideWorkspace(t *testing.T) {
	s, ws := newShell(t, Options{})
	res := execReq(t, s, provider.ExecRequest{Command: "mkdir -p $HOME/.npm/_logs && echo log > $HOME/.npm/_logs/l && echo t > $TMPDIR/t && cat $HOME/.npm/_logs/l"})
	if res.ExitCode != 0 || res.Stdout != "log\n" || len(res.Changed) != 0 {
		t.Errorf("writes to HOME and TMPDIR: %+v", res)
	}
	if _, ok := readWS(t, ws, ".npm/_logs/l"); ok {
		t.Error("a file under HOME reached the workspace")
	}
	res = execReq(t, s, provider.ExecRequest{Command: "head -c 3000000 /dev/zero > /tmp/big", Limits: provider.Limits{Disk: 1 << 20}})
	if res.ExitCode == 0 {
		t.Errorf("/tmp holds more than the disk limit: %+v", res)
	}
}

// TestOperatorEnv: the operator's variables go over the defaults, a
// request's over those except the names the operator keeps.
func TestOperatorEnv(t *testing.T) {
	s, _ := newShell(t, Options{Env: map[string]string{"PATH": "/opt/tool/bin:" + sandboxPath, "PROXY": "op"}, LockEnv: []string{"PATH"}})
	res := execReq(t, s, provider.ExecRequest{Command: `echo "$PATH $PROXY"`, Env: map[string]string{"PROXY": "call"}})
	if res.Stdout != "/opt/tool/bin:"+sandboxPath+" call\n" {
		t.Errorf("environment: %q", res.Stdout)
	}
	_, err := s.Exec(context.Background(), provider.ExecRequest{Command: "echo ran > ran", Env: map[string]string{"PATH": "/evil"}})
	if !errors.Is(err, fs.ErrPermission) {
		t.Errorf("request setting a kept variable: %v, want fs.ErrPermission", err)
	}
}

// TestRunLimiter: with the server's one run slot taken, a run waits its
// turn; cancelled while waiting, it runs nothing; the slot freed, it runs.
func TestRunLimiter(t *testing.T) {
	runs := NewLimiter(1)
	s, ws := newShell(t, Options{Runs: runs})
	execReq(t, s, provider.ExecRequest{Command: "true"}) // the confinement probe runs once
	if _, err := runs.acquire(context.Background()); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if _, err := s.Exec(ctx, provider.ExecRequest{Command: "echo ran > ran"}); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("exec while the slot is taken: %v", err)
	}
	if _, ok := readWS(t, ws, "ran"); ok {
		t.Error("a run cancelled in the queue ran")
	}
	done := make(chan provider.ExecResult)
	go func() { done <- execReq(t, s, provider.ExecRequest{Command: "echo ran > ran"}) }()
	runs.release()
	res := <-done
	if got, _ := readWS(t, ws, "ran"); got != "ran\n" || res.ExitCode != 0 {
		t.Errorf("queued run: %+v, ran = %q", res, got)
	}
}

// TestRunWaitingForWorkDir: a run waiting for its work dir, behind a run
// of this process (the dir's mutex) or of another (its lock file), runs
// nothing and returns once cancelled, not when the other run ends.
func TestRunWaitingForWorkDir(t *testing.T) {
	s, ws := newShell(t, Options{})
	mustExec(t, s, "true") // creates the state directory
	for _, c := range []struct {
		name string
		hold func() (release func())
	}{
		{"this process", func() func() {
			s.st.mu.Lock()
			return s.st.mu.Unlock
		}},
		{"another process", func() func() {
			f, err := lockFile(s.stateDir(), true)
			if err != nil {
				t.Fatal(err)
			}
			return func() { f.Close() }
		}},
	} {
		release := c.hold()
		ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
		done := make(chan error, 1)
		go func() {
			_, err := s.Exec(ctx, provider.ExecRequest{Command: "echo ran > ran"})
			done <- err
		}()
		var err error
		select {
		case err = <-done:
		case <-time.After(time.Minute):
			t.Errorf("%s: a cancelled run waits for the run before it to end", c.name)
			release()
			err = <-done
			release = func() {}
		}
		cancel()
		release()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: exec behind a run: %v, want context.DeadlineExceeded", c.name, err)
		}
		if _, ok := readWS(t, ws, "ran"); ok {
			t.Errorf("%s: a run cancelled while waiting for its work dir ran", c.name)
		}
	}
	mustExec(t, s, "true")
}

// TestRequestLimitsCapped: a request's limits are lowered to the
// server's maximum, its zero fields take the server's defaults, and the
// run reports the limits it had.
func TestRequestLimitsCapped(t *testing.T) {
	def := provider.Limits{CPUTime: time.Minute, Memory: 64 << 20, Processes: 50, OpenFiles: 100, Disk: 1 << 20}
	s, _ := newShell(t, Options{Limits: def})
	res := execReq(t, s, provider.ExecRequest{Command: "ulimit -n", Limits: provider.Limits{Memory: 1 << 40, OpenFiles: 60}})
	want := def
	want.OpenFiles = 60
	if res.Limits != want || res.Stdout != "60\n" {
		t.Errorf("limits %+v (ulimit -n %q), want %+v", res.Limits, res.Stdout, want)
	}
	if _, err := s.Exec(context.Background(), provider.ExecRequest{Command: "true", Limits: provider.Limits{Disk: -1}}); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("negative limit: %v", err)
	}
	if _, err := s.Exec(context.Background(), provider.ExecRequest{Command: "true", Timeout: -time.Second}); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("negative timeout: %v", err)
	}
}
