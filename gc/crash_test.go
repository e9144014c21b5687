package gc_test

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/gc"
	"github.com/forkspace/forkspace/internal/benchtree"
)

// crashDirEnv names the store a crash child collects.
const crashDirEnv = "FORKSPACE_GC_CRASH_DIR"

// TestGCCrashChild is the child of TestGCCrash: it collects the store
// named by crashDirEnv until it is killed. Without the variable it does
// nothing.
func TestGCCrashChild(t *testing.T) {
	dir := os.Getenv(crashDirEnv)
	if dir == "" {
		return
	}
	e := openEnv(t, dir)
	fmt.Println("ready")
	for {
		if _, err := e.s.GC(context.Background(), forkspace.GCOptions{Grace: gc.NoGrace}); err != nil {
			t.Fatal(err)
		}
	}
}

// TestGCCrash kills a collecting child process with SIGKILL at random
// moments, over several rounds that each add live data and garbage. After
// each kill the store must reopen, check clean and read back every live
// file; a final collection must leave exactly the live data.
func TestGCCrash(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(3, 4))
	live := files{}
	for round := range 5 {
		e := openEnv(t, dir)
		w, err := e.s.Workspace(ctx, "live")
		if round == 0 {
			w, err = e.s.Create(ctx, "live", forkspace.CreateOptions{})
		}
		if err != nil {
			t.Fatal(err)
		}
		checkFiles(t, fmt.Sprintf("round %d", round), w, live)
		if c, err := e.s.Check(ctx); err != nil || !c.Clean() {
			t.Fatalf("round %d: check: %v %+v", round, err, c)
		}
		// Live data, and a fork full of garbage-to-be.
		name := fmt.Sprintf("f%d", round)
		live[name] = benchtree.Bytes(uint64(round), 1000+r.IntN(3000))
		if err := w.WriteFile(ctx, name, live[name], 0o644); err != nil {
			t.Fatal(err)
		}
		g, err := w.Fork(ctx, "garbage", forkspace.ForkOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for i := range 150 {
			if err := g.WriteFile(ctx, fmt.Sprintf("g%d", i), benchtree.Bytes(uint64(1000*round+i), 600+i), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		if err := e.s.Delete(ctx, "garbage"); err != nil {
			t.Fatal(err)
		}
		if err := e.s.Close(); err != nil {
			t.Fatal(err)
		}

		cmd := exec.Command(os.Args[0], "-test.run=^TestGCCrashChild$")
		cmd.Env = append(os.Environ(), crashDirEnv+"="+dir)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		if line, err := bufio.NewReader(out).ReadString('\n'); line != "ready\n" {
			t.Fatalf("child: %q, %v", line, err)
		}
		// A collection of this store takes about 100 ms (more under the
		// race detector): kill it anywhere in it, mostly in Execute.
		time.Sleep(time.Duration(r.IntN(150)) * time.Millisecond)
		if err := cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		_ = cmd.Wait() // killed
	}
	e := openEnv(t, dir)
	w, err := e.s.Workspace(ctx, "live")
	if err != nil {
		t.Fatal(err)
	}
	checkFiles(t, "after the last kill", w, live)
	if _, err := e.s.GC(ctx, forkspace.GCOptions{Grace: gc.NoGrace}); err != nil {
		t.Fatal(err)
	}
	if err := w.Fold(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := e.s.GC(ctx, forkspace.GCOptions{Grace: gc.NoGrace}); err != nil {
		t.Fatal(err)
	}
	blobs, bodies, nodes := e.stored()
	wantBodies, wantBlobs := live.hashes()
	if !equal(blobs, wantBlobs) || !equal(bodies, wantBodies) || !equal(nodes, e.reachableNodes()) {
		t.Fatalf("after a final collection: %d blobs, %d bodies, %d nodes; want %d, %d, %d",
			len(blobs), len(bodies), len(nodes), len(wantBlobs), len(wantBodies), len(e.reachableNodes()))
	}
	checkFiles(t, "at the end", w, live)
}
