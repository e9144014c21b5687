package tools_test

import (
	"context"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/forkspace/forkspace/tools"
)

var runID = regexp.MustCompile(`run-[0-9a-f]{16}`)

// start starts command in the background and returns its run id.
func (e *env) start(command string) string {
	e.t.Helper()
	got := e.ok("exec", M{"command": command, "background": true, "timeout_seconds": 3600})
	id := runID.FindString(got)
	if id == "" {
		e.t.Fatalf("background exec did not return a run id: %q", got)
	}
	return id
}

// TestExecBackground: a background run returns its id at once; while it
// runs, exec_status and exec_wait (timing out) say so, exec_tail and
// exec_output show its output so far, and another workspace sees none of
// it; exec_kill stops it. A second run's exec_wait returns the full exec
// result, and its changes are in the workspace.
func TestExecBackground(t *testing.T) {
	e := newSandboxEnv(t, tools.Options{})
	id := e.start("echo line1; seq 1 20000; sleep 600")
	if got := e.ok("exec_status", M{"run": id}); !strings.Contains(got, id+" is running") {
		t.Errorf("status of a running run:\n%s", got)
	}
	if got := e.ok("exec_wait", M{"run": id, "timeout_seconds": 1}); !strings.Contains(got, "is running") {
		t.Errorf("exec_wait that times out:\n%s", got)
	}
	if got := e.ok("exec_status", M{}); !strings.Contains(got, id+" running") {
		t.Errorf("list of runs:\n%s", got)
	}
	var tail string
	for range 600 { // the output arrives while the command sleeps
		if tail = e.ok("exec_tail", M{"run": id, "bytes": 6}); strings.HasSuffix(tail, ":\n20000\n") {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !strings.Contains(tail, "last 6 of 108900 bytes") {
		t.Errorf("exec_tail:\n%s", tail)
	}
	page := e.ok("exec_output", M{"run": id, "offset": 0, "bytes": 8})
	if !strings.HasSuffix(page, ":\nline1\n1\n") || !strings.Contains(page, "continue with offset 8") {
		t.Errorf("exec_output:\n%s", page)
	}
	if page := e.ok("exec_output", M{"run": id, "offset": 108894}); !strings.HasSuffix(page, ":\n20000\n") {
		t.Errorf("last page of exec_output:\n%s", page)
	}
	other := newEnv(t, tools.Options{})
	for _, tool := range []string{"exec_status", "exec_tail", "exec_output", "exec_wait", "exec_kill"} {
		r := e.set.Call(context.Background(), tools.Direct(other.ws), tool, []byte(`{"run":"`+id+`"}`))
		if !r.IsError || !strings.Contains(r.Text, "no run") {
			t.Errorf("%s of another workspace's run: %+v", tool, r)
		}
	}
	if got := e.ok("exec_kill", M{"run": id}); !strings.Contains(got, id+" finished") {
		t.Errorf("exec_kill:\n%s", got)
	}

	id = e.start("echo done > out.txt")
	got := e.ok("exec_wait", M{"run": id, "timeout_seconds": 300})
	for _, want := range []string{id + " finished", "exit code 0", "created out.txt"} {
		if !strings.Contains(got, want) {
			t.Errorf("exec_wait lacks %q:\n%s", want, got)
		}
	}
	if e.get("out.txt") != "done\n" {
		t.Errorf("out.txt = %q", e.get("out.txt"))
	}
	e.fails("exec_status", M{"run": "run-0000000000000000"}, "no run")
	e.fails("exec_tail", M{"run": id, "bytes": 65537}, "bytes must be between 0 and 65536")
}

// TestExecKillQueued: a run waiting for its turn behind another run of
// the workspace ends at once when killed, the running one untouched (it
// used to wait for the running one to end, exec_kill giving up after
// killWait).
func TestExecKillQueued(t *testing.T) {
	e := newSandboxEnv(t, tools.Options{})
	running := e.start("echo started; sleep 600")
	for range 600 {
		if strings.HasSuffix(e.ok("exec_tail", M{"run": running}), "started\n") {
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	queued := e.start("echo ran > ran.txt")
	time.Sleep(500 * time.Millisecond) // nothing tells a run waits its turn: let it get there
	if got := e.ok("exec_kill", M{"run": queued}); !strings.Contains(got, queued+" finished") {
		t.Errorf("exec_kill of a queued run:\n%s", got)
	}
	if got := e.ok("exec_status", M{"run": running}); !strings.Contains(got, running+" is running") {
		t.Errorf("the running run after a queued one was killed:\n%s", got)
	}
	if got := e.ok("exec_kill", M{"run": running}); !strings.Contains(got, running+" finished") {
		t.Errorf("exec_kill:\n%s", got)
	}
	if _, err := e.ws.FS().Stat(context.Background(), "ran.txt"); err == nil {
		t.Error("the killed queued run ran")
	}
}

// TestExecBackgroundCap: at most MaxRuns runs are kept; when they are
// all running the next start is refused, and a finished one makes room.
func TestExecBackgroundCap(t *testing.T) {
	e := newSandboxEnv(t, tools.Options{})
	var ids []string
	for range tools.MaxRuns {
		ids = append(ids, e.start("sleep 600"))
	}
	e.fails("exec", M{"command": "true", "background": true}, "background runs are running")
	// Runs of one workspace take turns: the one running and those
	// waiting their turn end at once.
	var wg sync.WaitGroup
	for _, id := range ids {
		wg.Go(func() { e.ok("exec_kill", M{"run": id}) })
	}
	wg.Wait()
	for _, id := range ids {
		e.ok("exec_wait", M{"run": id, "timeout_seconds": 300})
	}
	last := e.start("true") // drops the finished run that ended first
	e.ok("exec_wait", M{"run": last, "timeout_seconds": 300})
	dropped := 0
	for _, id := range ids {
		if r := e.call("exec_status", M{"run": id}); r.IsError {
			dropped++
		}
	}
	if dropped != 1 {
		t.Errorf("a start past the cap dropped %d finished runs, want 1", dropped)
	}
}

// TestExecProgressCountsOutput: the progress of a running exec counts
// the bytes of output so far, and never comes after the call returned.
func TestExecProgressCountsOutput(t *testing.T) {
	e := newSandboxEnv(t, tools.Options{ProgressInterval: 20 * time.Millisecond})
	var reports, withOutput atomic.Int64
	var returned atomic.Bool
	ctx := tools.WithProgress(context.Background(), func(_ float64, msg string) {
		if returned.Load() {
			t.Error("progress reported after the call returned")
		}
		reports.Add(1)
		if strings.HasSuffix(msg, ", 6 bytes of output") {
			withOutput.Add(1)
		}
	})
	r := e.set.Call(ctx, tools.Direct(e.ws), "exec", []byte(`{"command":"echo hello; sleep 2"}`))
	returned.Store(true)
	if r.IsError || reports.Load() == 0 || withOutput.Load() == 0 {
		t.Errorf("exec = %+v; %d progress reports, %d with the output so far", r, reports.Load(), withOutput.Load())
	}
}
