package sandbox

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	mrand "math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	forkspace "github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/internal/disktest"
	"github.com/forkspace/forkspace/internal/sandboxtest"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/provider"
)

// quotaShell is a Shell over a workspace with a byte quota in store dir.
func quotaShell(t *testing.T, dir string, quota int64, mode Mode) (*Shell, *forkspace.Workspace, *forkspace.Store) {
	t.Helper()
	needBwrap(t)
	st, err := forkspace.Open(context.Background(), forkspace.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	ws, err := st.Create(context.Background(), "q", forkspace.CreateOptions{Quota: meta.Quota{MaxBytes: quota}})
	if err != nil {
		t.Fatal(err)
	}
	s := New(ws, Options{WorkDir: sandboxtest.WorkDir(t), Audit: st.AuditLog(), Mode: mode})
	t.Cleanup(func() { s.Close() })
	return s, ws, st
}

// refusedWhole checks a result whose pull-back was refused: the command's
// exit code, nothing changed, every path dropped with reason.
func refusedWhole(t *testing.T, res provider.ExecResult, reason string, paths ...string) {
	t.Helper()
	if res.PulledBack || res.PullError == "" || len(res.Changed) != 0 || res.ExitCode != 0 {
		t.Fatalf("refused pull-back reported as pulled %v, error %q, exit %d, changed %v", res.PulledBack, res.PullError, res.ExitCode, res.Changed)
	}
	var got []string
	for _, d := range res.Dropped {
		if reason != "" && d.Reason != reason {
			t.Errorf("%s dropped for %q, want %q", d.Path, d.Reason, reason)
		}
		got = append(got, d.Path)
	}
	slices.Sort(got)
	if !slices.Equal(got, paths) {
		t.Fatalf("dropped %v, want %v", got, paths)
	}
}

// TestPullBackRefusedForQuota is issue 16 item 3: in a workspace with a
// 100,000-byte quota, a command changes keep.txt and writes 120 KB more.
// Nothing lands, keep.txt keeps its content, the result says so with the
// command's exit code, and the next run sees the workspace's state.
func TestPullBackRefusedForQuota(t *testing.T) {
	for _, mode := range modes {
		t.Run(string(mode), func(t *testing.T) { pullBackRefusedForQuota(t, mode) })
	}
}

func pullBackRefusedForQuota(t *testing.T, mode Mode) {
	ctx := context.Background()
	s, ws, st := quotaShell(t, filepath.Join(t.TempDir(), "store"), 100_000, mode)
	writeWS(t, ws, "keep.txt", "original\n", 0o644)
	res := mustExec(t, s, "echo changed > keep.txt; echo a > a.txt; head -c 60000 /dev/urandom > b.bin; "+
		"head -c 60000 /dev/urandom > c.bin; echo z > z.txt; echo done")
	refusedWhole(t, res, ReasonQuota, "a.txt", "b.bin", "c.bin", "keep.txt", "z.txt")
	if res.Stdout != "done\n" {
		t.Errorf("the command's output was lost: %q", res.Stdout)
	}
	if !strings.Contains(res.PullError, "quota exceeded") {
		t.Errorf("pull error %q", res.PullError)
	}
	if got, _ := readWS(t, ws, "keep.txt"); got != "original\n" {
		t.Fatalf("keep.txt = %q", got)
	}
	entries, err := execEntries(ctx, st, ws.ID())
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 || !strings.Contains(entries[0].Error, "pull-back refused") || len(entries[0].Changed) != 0 {
		t.Fatalf("audit of a refused pull-back: %+v", entries)
	}
	info, err := ws.Info(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if info.Entries != 1 || info.Bytes != int64(len("original\n")) {
		t.Fatalf("workspace after a refused pull-back: entries %d, bytes %d", info.Entries, info.Bytes)
	}
	// The work dir went back to the workspace's state.
	res = mustExec(t, s, "cat keep.txt; ls")
	if res.Stdout != "original\nkeep.txt\n" || !res.PulledBack {
		t.Fatalf("next run sees %q (pulled back %v)", res.Stdout, res.PulledBack)
	}
	// Within the quota everything lands.
	res = mustExec(t, s, "echo changed > keep.txt; head -c 60000 /dev/urandom > b.bin")
	if !res.PulledBack || len(res.Changed) != 2 || len(res.Dropped) != 0 {
		t.Fatalf("pull within quota: %+v", res)
	}
	if got, _ := readWS(t, ws, "keep.txt"); got != "changed\n" {
		t.Fatalf("keep.txt = %q", got)
	}
	if b, _ := readWS(t, ws, "b.bin"); len(b) != 60000 || bytes.Count([]byte(b), []byte{0}) == 60000 {
		t.Fatalf("b.bin holds %d bytes", len(b))
	}
}

// TestPullBackDiskFull: the store's disk fills up during the pull-back.
// Nothing lands, the acknowledged file keeps every byte (also after the
// store is reopened), and the result says why. (ModeCopy only: on the
// FUSE mount the command's bytes reach the store's disk as it writes them,
// so a full disk fails its writes, not its pull-back.)
func TestPullBackDiskFull(t *testing.T) {
	ctx := context.Background()
	disk := disktest.Small(t, 6<<20)
	dir := filepath.Join(disk, "store")
	s, ws, st := quotaShell(t, dir, 0, ModeCopy)
	keep := make([]byte, 1<<20)
	if _, err := rand.Read(keep); err != nil {
		t.Fatal(err)
	}
	if err := ws.WriteFile(ctx, "keep.bin", keep, 0o644); err != nil {
		t.Fatal(err)
	}
	res := mustExec(t, s, "head -c 1000 /dev/urandom > keep.bin; for i in 1 2 3 4 5 6 7 8; do head -c 1048576 /dev/urandom > f$i.bin; done")
	refusedWhole(t, res, ReasonDiskFull, "f1.bin", "f2.bin", "f3.bin", "f4.bin", "f5.bin", "f6.bin", "f7.bin", "f8.bin", "keep.bin")
	check := func(ws *forkspace.Workspace) {
		t.Helper()
		got, err := ws.ReadFile(ctx, "keep.bin")
		if err != nil || !bytes.Equal(got, keep) {
			t.Fatalf("keep.bin after a refused pull-back: %d bytes, %v", len(got), err)
		}
		info, err := ws.Info(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if info.Entries != 1 {
			t.Fatalf("entries %d after a refused pull-back", info.Entries)
		}
	}
	check(ws)
	s.Close()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st, err := forkspace.Open(ctx, forkspace.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	ws, err = st.Workspace(ctx, "q")
	if err != nil {
		t.Fatal(err)
	}
	check(ws)
}

// The pull-back crash test re-executes this test binary as a writer
// (TestPullBackCrashWriter) that runs exec after exec against one
// workspace, printing "A i" once run i returned with its changes pulled
// back. The parent kills it with SIGKILL at a random moment, reopens the
// store and checks that every acknowledged run is there whole, the run in
// flight is there whole or not at all, and a file written before any run
// keeps every byte.

const pullCrashEnv = "FORKSPACE_PULL_CRASH_WRITER"

// pullRunFiles is how many small files run i creates under r<i>.
const pullRunFiles = 30

// pullRunCommand is run i's command: it rewrites gen and big.bin (about
// 3.5 MB, distinct lines, so several chunks) and creates r<i>/f1..f30.
func pullRunCommand(i int) string {
	return fmt.Sprintf("printf %d > gen; seq -f 'run %d line %%.0f' 1 150000 > big.bin; mkdir r%d; "+
		"for j in $(seq %d); do echo \"%d $j\" > r%d/f$j; done", i, i, i, pullRunFiles, i, i)
}

func pullRunBig(i int) []byte {
	var b bytes.Buffer
	for j := 1; j <= 150000; j++ {
		fmt.Fprintf(&b, "run %d line %d\n", i, j)
	}
	return b.Bytes()
}

// blobFiles counts the files under the store's blob directory (chunks
// stored or being stored): only a pull-back adds them during a run.
func blobFiles(dir string) int {
	n := 0
	_ = filepath.WalkDir(filepath.Join(dir, "blobs"), func(_ string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			n++
		}
		return nil
	})
	return n
}

// pullCrashWriter is the writer process's work (TestMain runs it): runs
// from the one after the last acknowledged on, each acknowledged on
// stdout, until the parent kills it.
func pullCrashWriter(spec string) error {
	args := strings.Split(spec, ",")
	dir, work, mode := args[0], args[1], Mode(args[3])
	start, err := strconv.Atoi(args[2])
	if err != nil {
		return err
	}
	ctx := context.Background()
	st, err := forkspace.Open(ctx, forkspace.Options{Dir: dir})
	if err != nil {
		return err
	}
	ws, err := st.Workspace(ctx, "c")
	if err != nil {
		return err
	}
	s := New(ws, Options{WorkDir: work, Mode: mode})
	for i := start; ; i++ {
		res, err := s.Exec(ctx, provider.ExecRequest{Command: pullRunCommand(i)})
		if err != nil || !res.PulledBack || res.ExitCode != 0 {
			return fmt.Errorf("run %d: %v, %+v", i, err, res)
		}
		fmt.Printf("A %d\n", i)
	}
}

// writerStall bounds how long TestPullBackCrash waits for its writer's
// next acknowledgement, or its end once killed: a writer stuck (on a dead
// mount, say) fails the test with what it wrote to stderr, instead of
// holding the suite until its timeout.
const writerStall = 2 * time.Minute

func TestPullBackCrash(t *testing.T) {
	for _, mode := range modes {
		t.Run(string(mode), func(t *testing.T) { pullBackCrash(t, mode) })
	}
}

// pullBackCrash is TestPullBackCrash in one mode. On the FUSE mount a
// kill leaves a dead mount and a scratch fork behind: the next writer's
// first run removes both, and the test checks nothing stays after the
// last kill but what the next run would remove.
func pullBackCrash(t *testing.T, mode Mode) {
	needBwrap(t)
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "store")
	st, err := forkspace.Open(ctx, forkspace.Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	ws, err := st.Create(ctx, "c", forkspace.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	base := make([]byte, 2<<20)
	if _, err := rand.Read(base); err != nil {
		t.Fatal(err)
	}
	if err := ws.WriteFile(ctx, "base.bin", base, 0o644); err != nil {
		t.Fatal(err)
	}
	st.Close()

	work := sandboxtest.WorkDir(t)
	t.Cleanup(func() { unmountStale(work + ".state") })
	acked := -1 // the last run acknowledged
	seed := uint64(time.Now().UnixNano())
	rng := mrand.New(mrand.NewPCG(seed, 2))
	t.Logf("seed %d", seed)
	const rounds = 6
	var torn, midPulls int // rounds whose run in flight was lost whole; kills mid-pull
	for round := range rounds {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), fmt.Sprintf("%s=%s,%s,%d,%s", pullCrashEnv, dir, work, acked+1, mode))
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		// After 1 to 3 acknowledged runs, kill at a random moment, or (odd
		// rounds) as soon as the next run's pull-back stores a chunk.
		after := 1 + rng.IntN(3)
		midPull := round%2 == 1
		acks := make(chan int)
		go func() {
			defer close(acks)
			sc := bufio.NewScanner(out)
			for sc.Scan() {
				if op, arg, _ := strings.Cut(sc.Text(), " "); op == "A" {
					i, _ := strconv.Atoi(arg)
					acks <- i
				}
			}
		}()
		n, blobs := 0, -1
		tick := time.NewTicker(time.Millisecond)
		stall := time.NewTimer(writerStall)
		for open := true; open; {
			select {
			case <-stall.C:
				cmd.Process.Kill()
				ended := make(chan struct{})
				go func() { cmd.Wait(); close(ended) }()
				msg := "none: the writer did not end 10 s after SIGKILL"
				select {
				case <-ended:
					msg = stderr.String()
				case <-time.After(10 * time.Second):
				}
				t.Fatalf("round %d: the writer acknowledged nothing and did not end for %v (killed now); last run acknowledged %d; stderr: %s",
					round, writerStall, acked, msg)
			case i, ok := <-acks:
				if !ok {
					open = false
					break
				}
				stall.Reset(writerStall)
				acked = i
				// Only a round waiting for a pull-back's chunk can wait in
				// vain; in the others, runs faster than the random delay
				// before the kill are acknowledged meanwhile.
				if n++; midPull && n == after+3 {
					t.Fatalf("round %d: no pull-back stored a chunk in 3 runs", round)
				}
				if n != after {
					break
				}
				if !midPull {
					time.Sleep(time.Duration(rng.IntN(400)) * time.Millisecond)
					cmd.Process.Kill()
					break
				}
				blobs = blobFiles(dir)
			case <-tick.C:
				if blobs >= 0 && blobFiles(dir) > blobs {
					cmd.Process.Kill()
					blobs = -1
					midPulls++
				}
			}
		}
		tick.Stop()
		err = cmd.Wait()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || !strings.Contains(exit.Error(), "killed") {
			t.Fatalf("round %d: writer ended with %v, not by SIGKILL; stderr: %s", round, err, stderr.String())
		}
		gen := verifyPullCrash(t, dir, base, acked)
		if gen == acked {
			torn++
		}
		acked = gen
	}
	t.Logf("%d rounds (%d killed mid-pull), %d runs acknowledged; in %d rounds the run in flight did not land", rounds, midPulls, acked+1, torn)
	if mode == ModeFUSE {
		// The last kill left a dead mount and a scratch fork: the next
		// run removes both.
		st, err := forkspace.Open(ctx, forkspace.Options{Dir: dir})
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		ws, err := st.Workspace(ctx, "c")
		if err != nil {
			t.Fatal(err)
		}
		s := New(ws, Options{WorkDir: work, Mode: ModeFUSE})
		defer s.Close()
		mustExec(t, s, "cat gen")
		sameTree(t, s, ws)
	}
	if midPulls == 0 {
		t.Fatal("no round was killed during a pull-back")
	}
}

// verifyPullCrash reopens the store after a SIGKILL and checks it holds
// runs 0..gen whole, nothing of later runs, with gen the last acknowledged
// run or the one after it; it returns gen.
// reopenAfterKill opens the store of a writer just killed. The lock goes
// with the last process holding the killed writer's lock file, which on a
// loaded machine may outlive the writer's reaping by a moment (CI saw it
// once); a lock still held after 10 s fails the test, naming the
// processes that have the lock file open.
func reopenAfterKill(t *testing.T, dir string) *forkspace.Store {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		st, err := forkspace.Open(context.Background(), forkspace.Options{Dir: dir})
		if err == nil {
			return st
		}
		if !errors.Is(err, errdefs.ErrBusy) || time.Now().After(deadline) {
			t.Fatalf("reopen after SIGKILL: %v; processes with the lock file open: %s", err, lockHolders(filepath.Join(dir, "lock")))
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// lockHolders lists the processes (pid and command line) with file p open.
func lockHolders(p string) string {
	var out []string
	procs, _ := filepath.Glob("/proc/[0-9]*/fd/*")
	for _, fd := range procs {
		if target, err := os.Readlink(fd); err == nil && target == p {
			pid := strings.Split(fd, "/")[2]
			cmdline, _ := os.ReadFile("/proc/" + pid + "/cmdline")
			out = append(out, pid+" "+strings.ReplaceAll(string(cmdline), "\x00", " "))
		}
	}
	return strings.Join(out, "; ")
}

func verifyPullCrash(t *testing.T, dir string, base []byte, acked int) int {
	t.Helper()
	ctx := context.Background()
	st := reopenAfterKill(t, dir)
	defer st.Close()
	ws, err := st.Workspace(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	read := func(name string) []byte {
		b, err := ws.ReadFile(ctx, name)
		if err != nil {
			t.Fatalf("after SIGKILL: %v", err)
		}
		return b
	}
	if !bytes.Equal(read("base.bin"), base) {
		t.Fatal("base.bin, written before any run, changed")
	}
	gen := -1
	if _, err := ws.Stat(ctx, "gen"); err == nil {
		if gen, err = strconv.Atoi(string(read("gen"))); err != nil {
			t.Fatal(err)
		}
	}
	if gen < acked || gen > acked+1 {
		t.Fatalf("workspace at run %d, last acknowledged %d", gen, acked)
	}
	if gen >= 0 && !bytes.Equal(read("big.bin"), pullRunBig(gen)) {
		t.Fatalf("big.bin is not run %d's", gen)
	}
	for i := 0; i <= gen+1; i++ {
		entries, err := ws.ReadDir(ctx, fmt.Sprintf("r%d", i))
		switch {
		case i > gen:
			if err == nil {
				t.Fatalf("run %d did not land (gen %d) but r%d exists with %d entries", i, gen, i, len(entries))
			}
			continue
		case err != nil:
			t.Fatalf("run %d landed but r%d: %v", i, i, err)
		case len(entries) != pullRunFiles:
			t.Fatalf("r%d holds %d files of %d", i, len(entries), pullRunFiles)
		}
		for j := 1; j <= pullRunFiles; j++ {
			if got := string(read(fmt.Sprintf("r%d/f%d", i, j))); got != fmt.Sprintf("%d %d\n", i, j) {
				t.Fatalf("r%d/f%d = %q", i, j, got)
			}
		}
	}
	return gen
}
