package tools

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/forkspace/forkspace/provider"
)

// Progress receives a long call's progress: a count that grows (seconds
// so far) and a message. An MCP server sends it to the client as a
// progress notification, which also keeps clients that time out idle
// requests (60 s in the TypeScript SDK) waiting.
type Progress func(progress float64, message string)

type progressKey struct{}

// WithProgress returns ctx carrying p for the calls run under it.
func WithProgress(ctx context.Context, p Progress) context.Context {
	return context.WithValue(ctx, progressKey{}, p)
}

// progressEvery is the default of Options.ProgressInterval.
var progressEvery = 10 * time.Second

// reportWhile calls ctx's Progress every interval, with the time since
// start and the output count out, until the returned stop is called
// (nothing when ctx carries none). It never calls it after stop returned.
func reportWhile(ctx context.Context, what string, interval time.Duration, start time.Time, out func() int64) (stop func()) {
	p, _ := ctx.Value(progressKey{}).(Progress)
	if p == nil {
		return func() {}
	}
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-t.C:
				s := now.Sub(start).Round(time.Second)
				p(s.Seconds(), fmt.Sprintf("%s: running for %s, %d bytes of output", what, s, out()))
			}
		}
	}()
	return func() { close(done); <-exited }
}

// streamer is a shell that also copies the output as it comes
// (sandbox.Shell).
type streamer interface {
	ExecStream(ctx context.Context, req provider.ExecRequest, stdout, stderr io.Writer) (provider.ExecResult, error)
}

// execWatched runs req on sh, copying its output to out (nil: nowhere)
// when sh streams, and reporting progress to ctx's Progress.
func (s *Set) execWatched(ctx context.Context, sh provider.Shell, req provider.ExecRequest, out io.Writer) (provider.ExecResult, error) {
	w := &countingWriter{w: out}
	defer reportWhile(ctx, "exec", s.opts.ProgressInterval, time.Now(), w.n.Load)()
	if st, ok := sh.(streamer); ok {
		return st.ExecStream(ctx, req, w, w)
	}
	return sh.Exec(ctx, req)
}

// countingWriter counts what stdout and stderr write (concurrently) and
// passes it on to w (nil: nowhere).
type countingWriter struct {
	mu sync.Mutex
	n  atomic.Int64
	w  io.Writer
}

func (c *countingWriter) Write(p []byte) (int, error) {
	c.n.Add(int64(len(p)))
	if c.w != nil {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.w.Write(p) // a spool that fails only loses its copy; the command goes on
	}
	return len(p), nil
}
