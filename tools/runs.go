package tools

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/forkspace/forkspace/audit"
	"github.com/forkspace/forkspace/provider"
)

// Bounds of background runs (exec with background: true), server-wide per
// Set.
const (
	// MaxRuns caps the background runs a Set keeps, running or finished.
	// Starting one more drops the oldest finished run; when all are
	// running, the start is refused.
	MaxRuns = 16
	// KeepRuns is how long a finished run stays retrievable.
	KeepRuns = 30 * time.Minute
	// MaxRunOutput caps the output of a run spooled for exec_output (stdout
	// and stderr as they came, in an unlinked temporary file); past it
	// only the last MaxRunTail bytes are kept, for exec_tail.
	MaxRunOutput = 32 << 20
	// MaxRunTail is the most a run's tail (exec_tail) or one page of its
	// output (exec_output) returns.
	MaxRunTail = 64 << 10
)

// runs are the background runs of a Set.
type runs struct {
	mu   sync.Mutex
	byID map[string]*bgRun
}

// bgRun is one background run.
type bgRun struct {
	id, ws, command string
	session         string // the audit actor's session that started it
	start           time.Time
	cancel          context.CancelFunc
	out             *spool
	done            chan struct{} // closed when res, err and ended are set
	res             provider.ExecResult
	err             error
	ended           time.Time
}

// startRun starts req on sh in the background and returns its run id.
func (s *Set) startRun(ctx context.Context, ws provider.Workspace, sh provider.Shell, req provider.ExecRequest) (string, error) {
	rs := &s.runs
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if rs.byID == nil {
		rs.byID = map[string]*bgRun{}
	}
	rs.pruneLocked(time.Now())
	if len(rs.byID) >= MaxRuns && !rs.dropOldestLocked() {
		return "", argError("%d background runs are running, the most this server keeps; wait for one (exec_wait) or kill one (exec_kill)", MaxRuns)
	}
	sp, err := newSpool()
	if err != nil {
		return "", err
	}
	var raw [8]byte
	rand.Read(raw[:])
	// The run outlives the call: not its cancellation nor its progress
	// reporter, but its values (the audit actor).
	rctx, cancel := context.WithCancel(context.WithValue(context.WithoutCancel(ctx), progressKey{}, nil))
	r := &bgRun{id: "run-" + hex.EncodeToString(raw[:]), ws: ws.ID(), command: req.Command, start: time.Now(),
		session: audit.ActorFrom(ctx).Session,
		cancel:  cancel, out: sp, done: make(chan struct{})}
	rs.byID[r.id] = r
	go func() {
		defer cancel()
		res, err := s.execWatched(rctx, sh, req, sp)
		r.res, r.err, r.ended = res, err, time.Now()
		close(r.done)
	}()
	return fmt.Sprintf("started %s in the background; follow it with exec_wait, exec_status, exec_tail or exec_output, stop it with exec_kill "+
		"(a finished run is kept for %s)", r.id, KeepRuns), nil
}

// EndRuns kills the background runs started in session (the audit
// actor's session of the exec call) and waits a little for them to end;
// a server calls it when the session ends, so no run outlives the
// session that started it (and closing the workspace, which waits for
// runs in flight, does not wait for them). Their results stay for the
// workspace's other sessions.
func (s *Set) EndRuns(session string) {
	s.runs.mu.Lock()
	var ending []*bgRun
	for _, r := range s.runs.byID {
		if r.session == session && !r.finished() {
			r.cancel()
			ending = append(ending, r)
		}
	}
	s.runs.mu.Unlock()
	t := time.NewTimer(killWait)
	defer t.Stop()
	for _, r := range ending {
		select {
		case <-r.done:
		case <-t.C:
			return
		}
	}
}

// pruneLocked drops the runs that finished more than KeepRuns before now.
func (rs *runs) pruneLocked(now time.Time) {
	for id, r := range rs.byID {
		if r.finished() && now.Sub(r.ended) > KeepRuns {
			rs.dropLocked(id)
		}
	}
}

// dropOldestLocked drops the finished run that ended first and reports
// whether there was one.
func (rs *runs) dropOldestLocked() bool {
	var oldest *bgRun
	for _, r := range rs.byID {
		if r.finished() && (oldest == nil || r.ended.Before(oldest.ended)) {
			oldest = r
		}
	}
	if oldest != nil {
		rs.dropLocked(oldest.id)
	}
	return oldest != nil
}

func (rs *runs) dropLocked(id string) {
	rs.byID[id].out.Close()
	delete(rs.byID, id)
}

// lookup returns run id of workspace ws.
func (rs *runs) lookup(ws, id string) (*bgRun, error) {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.pruneLocked(time.Now())
	r, ok := rs.byID[id]
	if !ok || r.ws != ws {
		return nil, argError("no run %q in this workspace (finished runs are kept for %s); exec_status without a run lists them", id, KeepRuns)
	}
	return r, nil
}

// list returns the runs of workspace ws, oldest first.
func (rs *runs) list(ws string) []*bgRun {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	rs.pruneLocked(time.Now())
	var out []*bgRun
	for _, r := range rs.byID {
		if r.ws == ws {
			out = append(out, r)
		}
	}
	slices.SortFunc(out, func(a, b *bgRun) int { return a.start.Compare(b.start) })
	return out
}

func (r *bgRun) finished() bool {
	select {
	case <-r.done:
		return true
	default:
		return false
	}
}

// status describes the run: still running with its progress, or how it
// ended with the full exec result.
func (r *bgRun) status() string {
	if !r.finished() {
		return fmt.Sprintf("%s is running: for %s, %d bytes of output\ncommand: %s", r.id, time.Since(r.start).Round(time.Second), r.out.size(), r.command)
	}
	if r.err != nil {
		return fmt.Sprintf("%s finished: %s\ncommand: %s", r.id, describe("exec", r.err), r.command)
	}
	return fmt.Sprintf("%s finished (%d bytes of output in all)\ncommand: %s\n%s", r.id, r.out.size(), r.command, formatExec(r.res))
}

type runIn struct {
	Run string `json:"run" jsonschema:"the run id exec returned (run-…)"`
}

type runListIn struct {
	Run string `json:"run,omitempty" jsonschema:"the run id exec returned (empty: list the runs of this workspace)"`
}

type runTailIn struct {
	Run   string `json:"run" jsonschema:"the run id exec returned (run-…)"`
	Bytes int    `json:"bytes,omitempty" bounds:"0,65536" jsonschema:"how many of the last bytes of output to return (default 4096)"`
}

type runOutputIn struct {
	Run    string `json:"run" jsonschema:"the run id exec returned (run-…)"`
	Offset int64  `json:"offset,omitempty" bounds:"0,33554432" jsonschema:"byte offset in the run's output (stdout and stderr as they came) to read from"`
	Bytes  int    `json:"bytes,omitempty" bounds:"0,65536" jsonschema:"how many bytes to return (default 16384)"`
}

type runWaitIn struct {
	Run            string `json:"run" jsonschema:"the run id exec returned (run-…)"`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty" bounds:"0,300" jsonschema:"wait at most this many seconds (default 30, at most 300), then report the run as still running"`
}

// addRunTools registers the tools that follow background runs (not in the
// read-only profile, which has no exec).
func (s *Set) addRunTools() {
	if s.opts.ReadOnly {
		return
	}
	add(s, readOnly, "exec_status", "Report whether a background run (exec with background: true) is running or finished, "+
		"with its full exec result once finished; without a run, list this workspace's runs.", runStatusTool)
	add(s, readOnly, "exec_tail", "Return the last bytes of a background run's output (stdout and stderr as they came), "+
		"while it runs or after.", runTailTool)
	add(s, readOnly, "exec_output", fmt.Sprintf("Page through the full output of a background run from a byte offset "+
		"(the first %d MiB are kept; the result says the total).", MaxRunOutput>>20), runOutputTool)
	add(s, readOnly, "exec_wait", "Wait until a background run finishes (at most timeout_seconds) and report its status.", runWaitTool)
	add(s, snapshotOp, "exec_kill", "Kill a background run (its whole process tree) and report how it ended.", runKillTool)
}

func runStatusTool(_ context.Context, c *call, in runListIn) (string, error) {
	if in.Run != "" {
		r, err := c.set.runs.lookup(c.ws.ID(), in.Run)
		if err != nil {
			return "", err
		}
		return r.status(), nil
	}
	rs := c.set.runs.list(c.ws.ID())
	if len(rs) == 0 {
		return "no background runs in this workspace", nil
	}
	var b strings.Builder
	for _, r := range rs {
		state := "running"
		if r.finished() {
			state = "finished"
			if r.err == nil {
				state += ", " + strings.SplitN(ExecStatus(r.res), "\n", 2)[0]
			}
		}
		fmt.Fprintf(&b, "%s %s (started %s ago): %s\n", r.id, state, time.Since(r.start).Round(time.Second), r.command)
	}
	return strings.TrimSuffix(b.String(), "\n"), nil
}

func runTailTool(_ context.Context, c *call, in runTailIn) (string, error) {
	r, err := c.set.runs.lookup(c.ws.ID(), in.Run)
	if err != nil {
		return "", err
	}
	tail, total := r.out.tail(cmp0(in.Bytes, 4096))
	state := "running"
	if r.finished() {
		state = "finished"
	}
	return fmt.Sprintf("%s (%s): last %d of %d bytes of output:\n%s", r.id, state, len(tail), total, tail), nil
}

func runOutputTool(_ context.Context, c *call, in runOutputIn) (string, error) {
	r, err := c.set.runs.lookup(c.ws.ID(), in.Run)
	if err != nil {
		return "", err
	}
	page, total, kept, err := r.out.read(in.Offset, cmp0(in.Bytes, 16<<10))
	if err != nil {
		return "", err
	}
	head := fmt.Sprintf("%s: bytes %d-%d of %d", r.id, in.Offset, in.Offset+int64(len(page)), total)
	if kept < total {
		head += fmt.Sprintf(" (only the first %d are kept; exec_tail has the last %d)", kept, MaxRunTail)
	}
	if next := in.Offset + int64(len(page)); next < kept {
		head += fmt.Sprintf("; continue with offset %d", next)
	}
	return head + ":\n" + string(page), nil
}

func runWaitTool(ctx context.Context, c *call, in runWaitIn) (string, error) {
	r, err := c.set.runs.lookup(c.ws.ID(), in.Run)
	if err != nil {
		return "", err
	}
	defer reportWhile(ctx, "exec_wait "+r.id, c.set.opts.ProgressInterval, r.start, r.out.size)()
	t := time.NewTimer(time.Duration(cmp0(in.TimeoutSeconds, 30)) * time.Second)
	defer t.Stop()
	select {
	case <-r.done:
	case <-t.C:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	return r.status(), nil
}

func runKillTool(_ context.Context, c *call, in runIn) (string, error) {
	r, err := c.set.runs.lookup(c.ws.ID(), in.Run)
	if err != nil {
		return "", err
	}
	r.cancel()
	t := time.NewTimer(killWait)
	defer t.Stop()
	select {
	case <-r.done:
	case <-t.C:
		return fmt.Sprintf("%s is killed but has not ended yet; exec_wait follows it\n%s", r.id, r.status()), nil
	}
	return r.status(), nil
}

// killWait bounds how long exec_kill waits for the run to end.
const killWait = 10 * time.Second

// cmp0 is v, or def when v is zero.
func cmp0(v, def int) int {
	if v == 0 {
		return def
	}
	return v
}

// spool keeps a run's output: the first MaxRunOutput bytes in an unlinked
// temporary file (gone with the process, whatever happens) and the last
// MaxRunTail bytes in memory.
type spool struct {
	mu    sync.Mutex
	f     *os.File // nil once closed
	total int64
	kept  int64
	last  []byte
}

func newSpool() (*spool, error) {
	f, err := os.CreateTemp("", "forkspace-run-*")
	if err != nil {
		return nil, fmt.Errorf("spool run output: %w", err)
	}
	os.Remove(f.Name())
	return &spool{f: f}, nil
}

func (s *spool) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.total += int64(len(p))
	if n := min(int64(len(p)), MaxRunOutput-s.kept); n > 0 && s.f != nil {
		m, _ := s.f.WriteAt(p[:n], s.kept)
		s.kept += int64(m)
	}
	s.last = append(s.last, p...)
	if len(s.last) > 2*MaxRunTail {
		s.last = slices.Clone(s.last[len(s.last)-MaxRunTail:])
	}
	return len(p), nil
}

func (s *spool) size() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.total
}

// tail returns the last n bytes of output and the total.
func (s *spool) tail(n int) (string, int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return string(s.last[max(0, len(s.last)-n):]), s.total
}

// read returns up to n bytes of output from off, the total output and how
// much of it is kept.
func (s *spool) read(off int64, n int) ([]byte, int64, int64, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil || off >= s.kept {
		return nil, s.total, s.kept, nil
	}
	buf := make([]byte, min(int64(n), s.kept-off))
	m, err := s.f.ReadAt(buf, off)
	if err != nil && m < len(buf) {
		return nil, 0, 0, fmt.Errorf("read run output: %w", err)
	}
	return buf[:m], s.total, s.kept, nil
}

// Close releases the file (its space returns to the disk).
func (s *spool) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.f == nil {
		return nil
	}
	err := s.f.Close()
	s.f = nil
	return err
}
