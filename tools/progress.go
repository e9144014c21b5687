package tools

import (
	"context"
	"fmt"
	"time"
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

// progressEvery is how often exec reports that its command still runs.
var progressEvery = 10 * time.Second

// reportWhile calls ctx's Progress every progressEvery until the
// returned stop is called (nothing when ctx carries none).
func reportWhile(ctx context.Context, what string) (stop func()) {
	p, _ := ctx.Value(progressKey{}).(Progress)
	if p == nil {
		return func() {}
	}
	done := make(chan struct{})
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		start := time.Now()
		t := time.NewTicker(progressEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case now := <-t.C:
				s := now.Sub(start).Round(time.Second)
				p(s.Seconds(), fmt.Sprintf("%s: running for %s", what, s))
			}
		}
	}()
	return func() { close(done); <-exited }
}
