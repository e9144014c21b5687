package sandbox

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"time"
)

// Limiter bounds how many commands run at once across every Shell that
// shares it (a server's workspaces); the others wait their turn in
// arrival order. Runs on one work dir are serialised anyway (see Shell).
type Limiter struct{ slots chan struct{} }

// NewLimiter returns a Limiter of n concurrent runs (at least 1).
func NewLimiter(n int) *Limiter { return &Limiter{slots: make(chan struct{}, max(n, 1))} }

// DefaultMaxRuns is the size of the Limiter Shells share when
// Options.Runs is nil.
var DefaultMaxRuns = max(4, 2*runtime.NumCPU())

var defaultLimiter = sync.OnceValue(func() *Limiter { return NewLimiter(DefaultMaxRuns) })

// acquire waits for a slot (or ctx) and returns how long it waited.
func (l *Limiter) acquire(ctx context.Context) (time.Duration, error) {
	start := time.Now()
	select {
	case l.slots <- struct{}{}:
		return time.Since(start), nil
	default:
	}
	select {
	case l.slots <- struct{}{}:
		return time.Since(start), nil
	case <-ctx.Done():
		return time.Since(start), fmt.Errorf("exec: waiting for a free run slot: %w", ctx.Err())
	}
}

func (l *Limiter) release() { <-l.slots }
