package provider

import (
	"context"
	"errors"
	"time"
)

// Retry defaults: three attempts, the first wait 2 s, doubling, all waits
// together at most 10 s.
const (
	DefaultAttempts = 3
	DefaultBackoff  = 2 * time.Second
	DefaultMaxWait  = 10 * time.Second
)

// sleepCtx waits d or until ctx is done.
func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// retry calls fn until it succeeds, fails with anything but a transient
// *FailedError, or has been tried attempts times. Waits double from base
// and their sum never exceeds maxWait.
func (m *Manager) retry(ctx context.Context, fn func() error) error {
	wait, waited := m.opts.Backoff, time.Duration(0)
	var err error
	for attempt := 1; ; attempt++ {
		if err = fn(); err == nil {
			return nil
		}
		var fe *FailedError
		if !errors.As(err, &fe) || !fe.Transient || attempt >= m.opts.Attempts {
			return err
		}
		d := min(wait, m.opts.MaxWait-waited)
		if d <= 0 {
			return err
		}
		m.log.Warn("transient workspace failure, retrying", "attempt", attempt, "wait", d, "err", err)
		if serr := m.opts.Sleep(ctx, d); serr != nil {
			return errors.Join(err, serr)
		}
		waited += d
		wait *= 2
	}
}
