package pgmeta

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/forkspace/forkspace/meta"
)

var _ meta.Listener = (*Store)(nil)

// Listen implements meta.Listener on a connection of its own (LISTEN ties
// a session to its channels, so not a pooled one). A lost connection is
// dialled again after a pause growing from 50 ms to 2 s; each time it is
// back, fn hears a zero Notification first.
func (s *Store) Listen(ctx context.Context, channels []string, fn func(meta.Notification)) error {
	pause := 50 * time.Millisecond
	for {
		err := s.listenOnce(ctx, channels, fn)
		if ctx.Err() != nil {
			return ctx.Err()
		}
		s.log.Warn("notifications: connection lost; reconnecting", "err", err, "in", pause)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(pause):
		}
		pause = min(2*pause, 2*time.Second)
	}
}

// listenOnce listens on one connection until it fails or ctx ends.
func (s *Store) listenOnce(ctx context.Context, channels []string, fn func(meta.Notification)) error {
	pc, err := s.pool.Acquire(ctx)
	if err != nil {
		return translate(err)
	}
	conn := pc.Hijack()
	defer conn.Close(context.Background())
	for _, ch := range channels {
		if _, err := conn.Exec(ctx, "LISTEN "+pgx.Identifier{ch}.Sanitize()); err != nil {
			return fmt.Errorf("listen on %s: %w", ch, translate(err))
		}
	}
	fn(meta.Notification{})
	for {
		n, err := conn.WaitForNotification(ctx)
		if err != nil {
			return translate(err)
		}
		fn(meta.Notification{Channel: n.Channel, Payload: n.Payload})
	}
}
