package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/forkspace/forkspace/execpolicy"
	"github.com/forkspace/forkspace/provider"
)

func TestHostAccountsInvisible(t *testing.T) {
	s, _ := newShell(t, Options{})
	host, err := os.ReadFile("/etc/passwd")
	if err != nil {
		t.Fatal(err)
	}
	res := mustExec(t, s, "cat /etc/passwd")
	if res.ExitCode != 0 || res.Stdout == string(host) || !strings.Contains(res.Stdout, ":"+MountPoint+":") {
		t.Errorf("/etc/passwd in the sandbox (exit %d):\n%s", res.ExitCode, res.Stdout)
	}
	for _, f := range []string{"/etc/shadow", "/root/.bashrc", "/home", "/var/log", "/proc/1/root/etc/shadow"} {
		res := mustExec(t, s, "cat "+f+" || ls "+f)
		if res.ExitCode == 0 {
			t.Errorf("%s readable in the sandbox: %q", f, res.Stdout)
		}
	}
}

func TestWritesOutsideStayInside(t *testing.T) {
	for _, mode := range modes {
		t.Run(string(mode), func(t *testing.T) { writesOutsideStayInside(t, mode) })
	}
}

func writesOutsideStayInside(t *testing.T, mode Mode) {
	s, ws := newShell(t, Options{Mode: mode})
	tag := fmt.Sprintf("forkspace-escape-%d", time.Now().UnixNano())
	targets := []string{
		"/tmp/../root/" + tag, "/usr/" + tag, "/" + tag, "../" + tag, "../../" + tag,
		"/etc/" + tag, "/tmp/" + tag, "/workspace/../" + tag,
	}
	var script []string
	for _, p := range targets {
		script = append(script, "echo x > "+p+" 2>/dev/null")
	}
	script = append(script, "ln /etc/passwd hardlink 2>/dev/null", "true")
	mustExec(t, s, strings.Join(script, "; "))
	for _, p := range []string{"/root/" + tag, "/usr/" + tag, "/" + tag, "/etc/" + tag, "/tmp/" + tag,
		filepath.Join(filepath.Dir(s.WorkDir()), tag), filepath.Join(filepath.Dir(filepath.Dir(s.WorkDir())), tag)} {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("host path %s exists after the run (%v)", p, err)
			os.Remove(p)
		}
	}
	if _, ok := readWS(t, ws, "hardlink"); ok {
		t.Error("a hard link to the host's /etc/passwd reached the workspace")
	}
	sameTree(t, s, ws)
}

func TestPlantedSymlinks(t *testing.T) {
	for _, mode := range modes {
		t.Run(string(mode), func(t *testing.T) { plantedSymlinks(t, mode) })
	}
}

func plantedSymlinks(t *testing.T, mode Mode) {
	s, ws := newShell(t, Options{Mode: mode})
	ctx := context.Background()
	shadow, _ := os.ReadFile("/etc/shadow")
	for name, target := range map[string]string{"leak": "/etc/shadow", "etc": "/etc", "up": "../../../../etc/hostname"} {
		if err := ws.Symlink(ctx, target, name); err != nil {
			t.Fatal(err)
		}
	}
	res := mustExec(t, s, "cat leak; cat etc/shadow; cat up; echo pwned > leak; echo pwned > etc/passwd; echo pwned > up; ln -s /etc/hostname made; true")
	if strings.Contains(res.Stdout, "root:") || (len(shadow) > 0 && strings.Contains(res.Stdout, string(shadow[:min(len(shadow), 20)]))) {
		t.Errorf("host secrets leaked into the output: %q", res.Stdout)
	}
	if now, _ := os.ReadFile("/etc/shadow"); !bytes.Equal(now, shadow) {
		t.Fatal("the host's /etc/shadow changed")
	}
	for name, target := range map[string]string{"leak": "/etc/shadow", "etc": "/etc", "made": "/etc/hostname"} {
		fi, err := ws.Lstat(ctx, name)
		if err != nil || fi.Mode().Type() != fs.ModeSymlink {
			t.Errorf("%s: %v, %v; want a symlink", name, fi, err)
			continue
		}
		if got, _ := ws.Readlink(ctx, name); got != target {
			t.Errorf("%s -> %q, want %q", name, got, target)
		}
	}
	sameTree(t, s, ws)
}

func TestNetworkOffByDefault(t *testing.T) {
	s, _ := newShell(t, Options{})
	ifaces := func(out string) []string {
		var names []string
		for _, line := range strings.Split(out, "\n") {
			if name, _, ok := strings.Cut(strings.TrimSpace(line), ":"); ok && !strings.Contains(name, "|") {
				names = append(names, name)
			}
		}
		return names
	}
	res := mustExec(t, s, "cat /proc/net/dev")
	if got := ifaces(res.Stdout); len(got) != 1 || got[0] != "lo" {
		t.Errorf("interfaces without Network: %v, want only lo", got)
	}
	// With the network on, the sandbox has its own interface (slirp4netns),
	// never the host's.
	s, _ = newShell(t, Options{Network: execpolicy.Network{Mode: execpolicy.Full}})
	res, err := s.Exec(context.Background(), provider.ExecRequest{Command: "cat /proc/net/dev", Network: true})
	if err != nil {
		t.Fatal(err)
	}
	if got := ifaces(res.Stdout); len(got) != 2 || got[0] != "lo" && got[1] != "lo" || !slices.Contains(got, "tap0") {
		t.Errorf("interfaces with Network: %v, want lo and tap0", got)
	}
}

func TestEnvironmentScrubbed(t *testing.T) {
	s, _ := newShell(t, Options{})
	t.Setenv("FORKSPACE_TEST_SECRET", "hunter2")
	res, err := s.Exec(context.Background(), provider.ExecRequest{
		Command: "echo \"[$FORKSPACE_TEST_SECRET] $HOME $PWD $MINE\"; env | wc -l",
		Env:     map[string]string{"MINE": "given"},
	})
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(res.Stdout), "\n")
	if len(lines) != 2 || lines[0] != "[] /tmp/home /workspace given" {
		t.Errorf("environment: %q", res.Stdout)
	}
	for _, env := range []map[string]string{{"A=B": "x"}, {"": "x"}, {"X": "a\x00b"}} {
		_, err := s.Exec(context.Background(), provider.ExecRequest{Command: "true", Env: env})
		if !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("Env %q: %v, want fs.ErrInvalid", env, err)
		}
	}
}

func TestBadRequests(t *testing.T) {
	s, _ := newShell(t, Options{})
	for _, cmd := range []string{"", "   ", "echo \x00"} {
		if _, err := s.Exec(context.Background(), provider.ExecRequest{Command: cmd}); !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("Exec(%q) = %v, want fs.ErrInvalid", cmd, err)
		}
	}
	_, ws := newWorkspace(t)
	missing := New(ws, Options{WorkDir: t.TempDir(), Bwrap: "/nonexistent/bwrap"})
	if _, err := missing.Exec(context.Background(), provider.ExecRequest{Command: "true"}); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Exec without bwrap = %v, want errors.ErrUnsupported", err)
	}
}

// pidsRunning lists the processes whose command line contains marker.
func pidsRunning(marker string) []string {
	var pids []string
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		if err == nil && bytes.Contains(b, []byte(marker)) {
			pids = append(pids, e.Name())
		}
	}
	return pids
}

// waitGone waits until no process runs with marker in its command line,
// failing after a generous bound (the kernel reaps a killed pid namespace
// asynchronously).
func waitGone(t *testing.T, marker string) {
	t.Helper()
	for range 200 {
		if len(pidsRunning(marker)) == 0 {
			return
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Errorf("processes still running: %v", pidsRunning(marker))
}

func TestTimeoutKillsEverything(t *testing.T) {
	s, ws := newShell(t, Options{})
	marker := fmt.Sprintf("%d", 100000+time.Now().UnixNano()%100000)
	res, err := s.Exec(context.Background(), provider.ExecRequest{
		Command: "echo started > s; (sleep " + marker + " &); setsid sleep " + marker + " & sleep " + marker,
		Timeout: 2 * time.Second, // long enough for the first echo on a loaded machine
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || res.ExitCode != -1 {
		t.Errorf("TimedOut %v exit %d", res.TimedOut, res.ExitCode)
	}
	waitGone(t, "sleep\x00"+marker)
	if got, _ := readWS(t, ws, "s"); got != "started\n" {
		t.Errorf("changes made before the timeout: s = %q", got)
	}
}

func TestHugeOutput(t *testing.T) {
	s, _ := newShell(t, Options{MaxOutput: 1000})
	res := mustExec(t, s, "head -c 5000000 /dev/zero | tr '\\0' a; yes err | head -c 3000 >&2")
	// The head and the tail survive, around a marker counting the rest.
	if want := strings.Repeat("a", 500) + "\n[output truncated: 4999000 bytes cut here]\n" + strings.Repeat("a", 500); res.Stdout != want {
		t.Errorf("stdout: %.80q… (%d bytes)", res.Stdout, len(res.Stdout))
	}
	if !strings.HasPrefix(res.Stderr, "err\nerr\n") || !strings.Contains(res.Stderr, "err\n[output truncated: ") || !strings.HasSuffix(res.Stderr, "bytes cut here]\nerr\n"+strings.Repeat("err\n", 123)) {
		t.Errorf("stderr: %q", res.Stderr)
	}
	marker := fmt.Sprintf("%d", 200000+time.Now().UnixNano()%100000)
	res, err := s.Exec(context.Background(), provider.ExecRequest{
		Command: "exec yes " + marker, Timeout: 2 * time.Second, MaxOutput: 100})
	if err != nil {
		t.Fatal(err)
	}
	if !res.TimedOut || len(res.Stdout) > 200 || !strings.Contains(res.Stdout, "output truncated") {
		t.Errorf("endless output: timed out %v, %d bytes", res.TimedOut, len(res.Stdout))
	}
	waitGone(t, "yes\x00"+marker)
}

func TestExitCode(t *testing.T) {
	s, _ := newShell(t, Options{})
	if res := mustExec(t, s, "echo out; echo err >&2; exit 3"); res.ExitCode != 3 || res.Stdout != "out\n" || res.Stderr != "err\n" {
		t.Errorf("result %+v", res)
	}
}

func TestContextCancelled(t *testing.T) {
	s, ws := newShell(t, Options{})
	writeWS(t, ws, "a", "a", 0o644)
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for {
			if _, err := os.Stat(filepath.Join(s.WorkDir(), "running")); err == nil {
				cancel()
				return
			}
			time.Sleep(5 * time.Millisecond)
		}
	}()
	_, err := s.Exec(ctx, provider.ExecRequest{Command: "touch running; echo changed > a; sleep 100"})
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("Exec = %v, want context.Canceled", err)
	}
	// Nothing was pulled, and the next run starts from the workspace again.
	if got, _ := readWS(t, ws, "a"); got != "a" {
		t.Errorf("a = %q after a cancelled run", got)
	}
	res := mustExec(t, s, "cat a; ls")
	if res.Stdout != "aa\n" || !s.Stats().Full {
		t.Errorf("after a cancelled run: %q, stats %+v", res.Stdout, s.Stats())
	}
}

// TestReadOnlyDirReplacedByLink: a command replaces a read-only directory
// with a link to a host directory; the change is dropped and the next run
// rebuilds the directory without writing through the link.
func TestReadOnlyDirReplacedByLink(t *testing.T) {
	s, ws := newShell(t, Options{ReadOnly: []string{"ro"}})
	writeWS(t, ws, "ro/x", "x", 0o644)
	target := t.TempDir()
	res := mustExec(t, s, "rm -rf ro && ln -s "+target+" ro")
	if len(res.Dropped) != 1 || res.Dropped[0].Path != "ro" {
		t.Errorf("Dropped = %v", res.Dropped)
	}
	// A direct write under the read-only directory, then a run.
	writeWS(t, ws, "ro/y", "y", 0o644)
	if res := mustExec(t, s, "cat ro/x ro/y"); res.Stdout != "xy" {
		t.Errorf("next run reads %q (%s)", res.Stdout, res.Stderr)
	}
	if ents, _ := os.ReadDir(target); len(ents) != 0 {
		t.Errorf("the link's target received %v", ents)
	}
	sameTree(t, s, ws)
}
