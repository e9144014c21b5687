package sandbox

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	forkspace "github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/internal/sandboxtest"
	"github.com/forkspace/forkspace/provider"
)

// orphanHelperEnv makes the test binary a server that runs one exec and
// is killed mid-run (TestNoOrphans).
const orphanHelperEnv = "FORKSPACE_ORPHAN_HELPER"

// orphanHelper is the helper process's work (TestMain runs it): a store
// and a work dir under dir, and one exec of command, which the parent
// kills mid-run.
func orphanHelper(spec string) error {
	dir, command, _ := strings.Cut(spec, "\n")
	ctx := context.Background()
	st, err := forkspace.Open(ctx, forkspace.Options{Dir: filepath.Join(dir, "store")})
	if err != nil {
		return err
	}
	ws, err := st.Create(ctx, "w", forkspace.CreateOptions{})
	if err != nil {
		return err
	}
	_, err = New(ws, Options{Mode: ModeCopy, WorkDir: filepath.Join(dir, "work")}).Exec(ctx, provider.ExecRequest{Command: command, Timeout: time.Hour})
	return err
}

// TestNoOrphans kills a process with SIGKILL while its exec runs (a
// background child and a foreground one): no process of the run may
// survive it.
func TestNoOrphans(t *testing.T) {
	needBwrap(t)
	for i := range 3 {
		marker := fmt.Sprintf("%d", 900000000+rand.IntN(99999999))
		command := fmt.Sprintf("sleep %s.1 & sleep %s.2", marker, marker)
		helper := exec.Command(os.Args[0], "-test.run=^$")
		// The helper dies by SIGKILL, before any cleanup of its own: it
		// keeps everything under this test's directory, which is removed.
		helper.Env = append(os.Environ(), orphanHelperEnv+"="+sandboxtest.Dir(t)+"\n"+command)
		if err := helper.Start(); err != nil {
			t.Fatal(err)
		}
		for deadline := time.Now().Add(time.Minute); len(procsWith(marker)) < 2; {
			if time.Now().After(deadline) {
				helper.Process.Kill()
				helper.Wait()
				t.Fatalf("round %d: the run never started", i)
			}
			time.Sleep(20 * time.Millisecond)
		}
		helper.Process.Signal(syscall.SIGKILL)
		helper.Wait()
		// The kernel needs a moment to deliver the death signals down the
		// chain; a surviving process never goes away on its own.
		var left []int
		for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
			if left = procsWith(marker); len(left) == 0 {
				break
			}
		}
		for _, pid := range left {
			cl, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
			t.Logf("left: %d %q", pid, cl)
			syscall.Kill(pid, syscall.SIGKILL)
		}
		if len(left) > 0 {
			t.Fatalf("round %d: %d processes of the run outlived their server", i, len(left))
		}
	}
}

// procsWith lists the processes whose command line contains s.
func procsWith(s string) []int {
	ents, _ := os.ReadDir("/proc")
	var pids []int
	for _, e := range ents {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil || pid == os.Getpid() {
			continue
		}
		cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		if bytes.Contains(cmdline, []byte(s)) && !bytes.Contains(cmdline, []byte("-test.run")) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// TestCancelKillsTree: a cancelled request kills its whole process tree,
// background children included.
func TestCancelKillsTree(t *testing.T) {
	for mech, opts := range mechanisms(t) {
		t.Run(mech, func(t *testing.T) {
			s, _ := newShell(t, opts)
			marker := fmt.Sprintf("%d", 900000000+rand.IntN(99999999))
			ctx, cancel := context.WithCancel(context.Background())
			go func() {
				for len(procsWith(marker)) < 2 {
					time.Sleep(20 * time.Millisecond)
				}
				cancel()
			}()
			_, err := s.Exec(ctx, provider.ExecRequest{Command: fmt.Sprintf("sleep %s.1 & sleep %s.2", marker, marker), Timeout: time.Hour})
			if !errors.Is(err, context.Canceled) {
				t.Errorf("cancelled exec: %v", err)
			}
			var left []int
			for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
				if left = procsWith(marker); len(left) == 0 {
					return
				}
			}
			for _, pid := range left {
				syscall.Kill(pid, syscall.SIGKILL)
			}
			t.Errorf("%d processes outlived the cancelled request", len(left))
		})
	}
}
