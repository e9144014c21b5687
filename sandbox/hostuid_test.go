package sandbox

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/forkspace/forkspace/internal/citest"
	"github.com/forkspace/forkspace/provider"
)

// needRoot fails (CI) or skips a test of what a root server does.
func needRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		citest.Missing(t, "a root server's host uids need root")
	}
}

// hostOwner returns the host uid and gid of p.
func hostOwner(t *testing.T, p string) (uint32, uint32) {
	t.Helper()
	var st unix.Stat_t
	if err := unix.Lstat(p, &st); err != nil {
		t.Fatal(err)
	}
	return st.Uid, st.Gid
}

// TestHostUIDNotRoot: under a root server the command's processes run as
// an unprivileged host uid of the range (as the host sees them in /proc),
// and the files it creates and those materialized for it belong to that
// uid, with and without Options.Root.
func TestHostUIDNotRoot(t *testing.T) {
	needRoot(t)
	for _, root := range []bool{false, true} {
		t.Run(fmt.Sprintf("root=%v", root), func(t *testing.T) {
			s, ws := newShell(t, Options{Root: root})
			writeWS(t, ws, "old", "x", 0o600)
			res := mustExec(t, s, "grep ^Uid: /proc/self/status; touch made; mkdir d; ln -s made d/l; cat old")
			inside := SandboxUID
			if root {
				inside = 0
			}
			if want := fmt.Sprintf("Uid:\t%d\t%[1]d\t%[1]d\t%[1]d\nx", inside); res.ExitCode != 0 || res.Stdout != want {
				t.Fatalf("inside: %+v, want stdout %q", res, want)
			}
			host, ok := ownerUID(s.WorkDir())
			if !ok {
				t.Fatal("the work dir belongs to no host uid of the sandbox's range")
			}
			for _, p := range []string{".", "made", "d", "d/l", "old"} {
				if uid, gid := hostOwner(t, filepath.Join(s.WorkDir(), p)); int(uid) != host || int(gid) != host {
					t.Errorf("%s belongs to %d:%d on the host, want %d:%[3]d", p, uid, gid, host)
				}
			}
			// The command's process as the host sees it.
			marker := fmt.Sprintf("%d.%d", 700000+rand.IntN(99999), rand.IntN(1000))
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			var wg sync.WaitGroup
			defer wg.Wait()
			wg.Go(func() { s.Exec(ctx, provider.ExecRequest{Command: "sleep " + marker}) })
			status := ""
			for deadline := time.Now().Add(time.Minute); status == ""; time.Sleep(20 * time.Millisecond) {
				if time.Now().After(deadline) {
					t.Fatal("the command's process never appeared")
				}
				status = statusOf("sleep\x00" + marker + "\x00")
			}
			if want := fmt.Sprintf("%d\t%[1]d\t%[1]d\t%[1]d", host); statusField(status, "Uid") != want || statusField(status, "Gid") != want {
				t.Errorf("the command's host process: Uid %q Gid %q, want %q", statusField(status, "Uid"), statusField(status, "Gid"), want)
			}
			cancel()
		})
	}
}

// statusOf returns /proc/PID/status of the process whose command line is
// cmdline ("" when there is none).
func statusOf(cmdline string) string {
	ents, _ := os.ReadDir("/proc")
	for _, e := range ents {
		if b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline")); err == nil && string(b) == cmdline {
			return readString(filepath.Join("/proc", e.Name(), "status"))
		}
	}
	return ""
}

// TestForkBombRlimit: with the cgroup path off, a root server's fork bomb
// is contained by RLIMIT_NPROC (which the kernel applies because the
// run's host uid is not root) while another run, on another workspace and
// its own host uid, starts processes and completes.
func TestForkBombRlimit(t *testing.T) {
	needRoot(t)
	const limit = 40
	bomb, _ := newShell(t, Options{NoCgroups: true})
	other, _ := newShell(t, Options{NoCgroups: true})
	// Bounded: 200 forks at most, so that a host that does not contain it
	// fails the test instead of falling over. Forked children sleep and
	// hold their slots until the run ends.
	const script = `perl -e 'my ($ok, $fail) = (0, 0);
for (1..200) { my $p = fork; if (!defined $p) { $fail++ } elsif ($p == 0) { sleep 600; exit } else { $ok++ } }
open F, ">", "counts"; print F "$ok $fail\n"; close F; rename "counts", "ready"; sleep 600'`
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var wg sync.WaitGroup
	wg.Go(func() {
		bomb.Exec(ctx, provider.ExecRequest{Command: script, Timeout: 5 * time.Minute, Limits: provider.Limits{Processes: limit}})
	})
	defer wg.Wait()
	ready := filepath.Join(bomb.WorkDir(), "ready")
	var counts []byte
	for deadline := time.Now().Add(2 * time.Minute); ; time.Sleep(50 * time.Millisecond) {
		var err error
		if counts, err = os.ReadFile(ready); err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the bomb never got through its forks")
		}
	}
	var ok, failed int
	if _, err := fmt.Sscan(string(counts), &ok, &failed); err != nil || ok >= limit || failed == 0 {
		t.Fatalf("bomb forked %q (started, refused), want fewer than %d started", counts, limit)
	}
	res := execReq(t, other, provider.ExecRequest{Command: "for i in 1 2 3 4 5 6 7 8; do /bin/true & done; wait; echo done",
		Limits: provider.Limits{Processes: limit}})
	if res.ExitCode != 0 || res.Stdout != "done\n" {
		t.Errorf("the other workspace's run during the bomb: %+v", res)
	}
	cancel()
}
