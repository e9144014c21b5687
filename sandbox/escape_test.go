package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/forkspace/forkspace/provider"
)

// needPython fails the test when python3 is missing: the probes that need
// a raw system call use it (scripts/test.sh installs it).
func needPython(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("python3"); err != nil {
		t.Fatalf("python3 is required (Debian package python3; scripts/test.sh installs it): %v", err)
	}
}

// escapeProbes are shell lines that print "ESCAPED <name>" when an attack
// on the host works. tag names the files they try to plant on the host;
// victim is the pid of a process outside the sandbox.
func escapeProbes(tag string, victim int) []string {
	probe := func(name, attack string) string {
		return fmt.Sprintf("if ( %s ) >/dev/null 2>&1; then echo 'ESCAPED %s'; fi", attack, name)
	}
	py := func(code string) string { return "python3 -c '" + code + "'" }
	return []string{
		probe("remount /usr", "mount -o remount,rw,bind /usr && touch /usr/"+tag),
		probe("write /usr", "touch /usr/"+tag),
		probe("mount tmpfs", "mount -t tmpfs none /tmp"),
		probe("bind mount", "mount --bind /workspace /usr"),
		probe("unshare -r", "unshare -r true"),
		probe("unshare -m", "unshare -m true"),
		probe("unshare -U", "unshare -U true"),
		probe("unshare -n", "unshare -n true"),
		probe("nsenter", "nsenter -t 1 -m true"),
		probe("pivot_root", "mkdir -p /tmp/old && pivot_root /tmp /tmp/old"),
		probe("chroot", "chroot / true"),
		probe("raw socket", py("import socket; socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)")),
		probe("packet socket", py("import socket; socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0)")),
		probe("sysctl core_pattern", "cat /proc/sys/kernel/core_pattern > /proc/sys/kernel/core_pattern"),
		probe("sysctl swappiness", "cat /proc/sys/vm/swappiness > /proc/sys/vm/swappiness"),
		probe("sysfs", "echo > /sys/kernel/uevent_helper"),
		probe("proc mem outside", fmt.Sprintf("head -c1 /proc/%d/mem", victim)),
		probe("signal outside", fmt.Sprintf("kill -9 %d", victim)),
		probe("ptrace", py("import ctypes, os; libc = ctypes.CDLL(None, use_errno=True); "+
			"pid = os.fork()\nif pid == 0:\n  os.pause()\n"+
			"r = libc.ptrace(16, pid, 0, 0); os.kill(pid, 9); assert r == 0")),
		probe("setuid su", "su -c true root </dev/null"),
		probe("capabilities", "grep -q '^CapEff:.*[1-9a-f]' /proc/self/status"),
		probe("write /", "touch /"+tag),
		probe("write /etc", "touch /etc/"+tag),
	}
}

// TestNoRootOnHost is the regression test of the root escape: bwrap kept
// every capability for a command when forkspace ran as root, so remounting
// /usr read-write and writing to it reached the host. Every probe must
// fail, and nothing outside the work dir may change.
func TestNoRootOnHost(t *testing.T) {
	needPython(t)
	for _, mode := range modes {
		for _, root := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/root=%v", mode, root), func(t *testing.T) {
				noRootOnHost(t, mode, root)
			})
		}
	}
}

// noRootOnHost is one case of TestNoRootOnHost.
func noRootOnHost(t *testing.T, mode Mode, root bool) {
	s, ws := newShell(t, Options{Root: root, Mode: mode})
	victim := exec.Command("sleep", "1000")
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	defer victim.Process.Kill()
	tag := fmt.Sprintf(".forkspace-probe-%d", time.Now().UnixNano())
	script := append(escapeProbes(tag, victim.Process.Pid), "id -u > uid", "true")
	res := mustExec(t, s, strings.Join(script, "\n"))
	if strings.Contains(res.Stdout, "ESCAPED") {
		t.Errorf("attacks that worked:\n%s", res.Stdout)
	}
	for _, p := range []string{"/usr/" + tag, "/" + tag, "/etc/" + tag} {
		if _, err := os.Lstat(p); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("%s exists on the host (%v)", p, err)
			os.Remove(p)
		}
	}
	if err := victim.Process.Signal(syscall.Signal(0)); err != nil {
		t.Errorf("the process outside the sandbox: %v", err)
	}
	want := fmt.Sprint(SandboxUID)
	if root {
		want = "0"
	}
	if got, _ := readWS(t, ws, "uid"); strings.TrimSpace(got) != want {
		t.Errorf("the command ran as uid %q, want %s", got, want)
	}
	sameTree(t, s, ws)
}

// TestSeccompDenies calls every denied system call (and clone with a
// namespace flag) from python's ctypes with zero arguments: each must fail
// with EPERM, the filter's answer, whatever the kernel would have said;
// clone3 fails with ENOSYS (libc then falls back to clone), and threads
// still work.
func TestSeccompDenies(t *testing.T) {
	needPython(t)
	s, _ := newShell(t, Options{})
	var nrs []string
	for _, nr := range deniedSyscalls {
		switch nr {
		case unix.SYS_ACCT, unix.SYS_VHANGUP: // harmful if the filter failed and they ran
		default:
			nrs = append(nrs, fmt.Sprint(nr))
		}
	}
	code := fmt.Sprintf(`
import ctypes, os, threading
libc = ctypes.CDLL(None, use_errno=True)
def errno(nr, *args):
    r = libc.syscall(nr, *args)
    if r == 0:
        os._exit(0)  # a clone child, or a call that worked
    return ctypes.get_errno() if r < 0 else 0
for nr in [%s]:
    print(nr, errno(nr, 0, 0, 0, 0, 0))
print("clone", errno(%d, %d | 17, 0, 0, 0, 0))
print("clone3", errno(%d, 0, 0))
t = threading.Thread(target=print, args=("thread",))
t.start(); t.join()
`, strings.Join(nrs, ", "), unix.SYS_CLONE, unix.CLONE_NEWUSER, unix.SYS_CLONE3)
	res, err := s.Exec(context.Background(), provider.ExecRequest{Command: "python3 -c \"$CODE\"", Env: map[string]string{"CODE": code}})
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, line := range strings.Split(strings.TrimSpace(res.Stdout), "\n") {
		nr, errno, _ := strings.Cut(line, " ")
		want := fmt.Sprint(int(unix.EPERM))
		switch nr {
		case "clone3":
			want = fmt.Sprint(int(unix.ENOSYS))
		case "thread":
			continue
		}
		if errno != want {
			lines = append(lines, fmt.Sprintf("syscall %s: errno %s, want %s", nr, errno, want))
		}
	}
	if len(lines) > 0 || !strings.HasSuffix(res.Stdout, "thread\n") || res.ExitCode != 0 {
		t.Errorf("%s\n(exit %d, stdout %q, stderr %q)", strings.Join(lines, "\n"), res.ExitCode, res.Stdout, res.Stderr)
	}
}

// TestWritableSurface lists what a command can write outside its work dir
// and /tmp: every other mount is read-only but its own /proc, /dev and
// the usual device nodes, and in /proc and /dev only the device nodes and
// its own processes' files are writable.
func TestWritableSurface(t *testing.T) {
	for _, mode := range modes {
		t.Run(string(mode), func(t *testing.T) { writableSurface(t, mode) })
	}
}

func writableSurface(t *testing.T, mode Mode) {
	s, _ := newShell(t, Options{Mode: mode})
	res := mustExec(t, s, `cut -d' ' -f5,6 /proc/self/mountinfo; echo; `+
		`find /proc /dev \( -path '/proc/[0-9]*' -o -path /proc/self -o -path /proc/thread-self -o -path /dev/shm `+
		`-o -path /dev/pts \) -prune -o -writable ! -type l -print 2>/dev/null`)
	mounts, files, _ := strings.Cut(res.Stdout, "\n\n")
	rw := map[string]bool{"/workspace": true, "/tmp": true, "/proc": true, "/dev": true, "/dev/shm": true, "/dev/pts": true}
	devices := map[string]bool{"/dev": true}
	for _, d := range []string{"null", "zero", "full", "random", "urandom", "tty", "ptmx"} {
		rw["/dev/"+d], devices["/dev/"+d] = true, true
	}
	for _, line := range strings.Split(mounts, "\n") {
		point, opts, _ := strings.Cut(line, " ")
		if !rw[point] && !strings.HasPrefix(opts, "ro") {
			t.Errorf("mount %s is read-write in the sandbox (%s)", point, opts)
		}
	}
	for _, p := range strings.Fields(files) {
		if !devices[p] && !strings.HasPrefix(p, "/proc/pressure/") { // triggers for its own cgroup
			t.Errorf("writable in the sandbox: %s", p)
		}
	}
	if !strings.Contains(mounts, "/workspace rw") {
		t.Errorf("mounts: %s", mounts)
	}
}

// TestWorkDirOwnership: the command sees its work dir as its own, and what
// it creates belongs on the host to the user forkspace runs as, or under a
// root server to the work dir's host uid.
func TestWorkDirOwnership(t *testing.T) {
	s, ws := newShell(t, Options{})
	writeWS(t, ws, "a", "a", 0o644)
	res := mustExec(t, s, "stat -c '%u %g' a . && echo b > a && mkdir -p d && echo c > d/c && chmod 600 d/c")
	want := fmt.Sprintf("%d %d\n", SandboxUID, SandboxUID)
	if res.Stdout != want+want || res.ExitCode != 0 {
		t.Errorf("owners in the sandbox: %q (%s)", res.Stdout, res.Stderr)
	}
	uid, gid := os.Getuid(), os.Getgid()
	if hostUIDs() {
		var ok bool
		if uid, ok = ownerUID(s.WorkDir()); !ok {
			t.Fatal("the work dir of a root server belongs to no host uid of the sandbox's range")
		}
		gid = uid
	}
	for _, p := range []string{"a", "d", "d/c"} {
		var st unix.Stat_t
		if err := unix.Lstat(s.WorkDir()+"/"+p, &st); err != nil {
			t.Fatal(err)
		}
		if int(st.Uid) != uid || int(st.Gid) != gid {
			t.Errorf("%s belongs to %d:%d on the host, want %d:%d", p, st.Uid, st.Gid, uid, gid)
		}
	}
	if got, _ := readWS(t, ws, "d/c"); got != "c\n" {
		t.Errorf("d/c = %q", got)
	}
}

// TestUnconfinedRefused: a bubblewrap that cannot confine (here: one that
// ignores its arguments and runs the command as is) is refused with
// ErrUnconfined before the command runs.
func TestUnconfinedRefused(t *testing.T) {
	fake := t.TempDir() + "/bwrap"
	// Runs the last argument with sh, like bwrap without any confinement.
	if err := os.WriteFile(fake, []byte("#!/bin/sh\nfor last; do :; done\nexec /bin/sh -c \"$last\"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	s, ws := newShell(t, Options{Bwrap: fake})
	_, err := s.Exec(context.Background(), provider.ExecRequest{Command: "touch ran"})
	if !errors.Is(err, ErrUnconfined) || !errors.Is(err, errors.ErrUnsupported) {
		t.Fatalf("Exec with a bwrap that does not confine = %v, want ErrUnconfined", err)
	}
	if _, ok := readWS(t, ws, "ran"); ok {
		t.Error("the command ran")
	}
	if _, err := os.Stat(s.WorkDir() + "/ran"); err == nil {
		t.Error("the command ran in the work dir")
	}
}
