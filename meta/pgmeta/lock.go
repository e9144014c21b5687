package pgmeta

import (
	"context"
	"fmt"

	"github.com/forkspace/forkspace/meta"
)

var _ meta.Locker = (*Store)(nil)

// Lock implements meta.Locker with a session advisory lock keyed by
// hashtext(key), held on a pooled connection kept out of the pool until
// unlock (a killed process's locks go with its connections).
func (s *Store) Lock(ctx context.Context, key string, shared bool) (func(), error) {
	pc, err := s.pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("lock %s: %w", key, translate(err))
	}
	lock, unlock := `SELECT pg_advisory_lock(hashtext($1))`, `SELECT pg_advisory_unlock(hashtext($1))`
	if shared {
		lock, unlock = `SELECT pg_advisory_lock_shared(hashtext($1))`, `SELECT pg_advisory_unlock_shared(hashtext($1))`
	}
	if _, err := pc.Exec(ctx, lock, key); err != nil {
		// A cancelled wait may leave the session in any state: drop it.
		pc.Hijack().Close(context.Background())
		return nil, fmt.Errorf("lock %s: %w", key, translate(err))
	}
	return func() {
		if _, err := pc.Exec(context.Background(), unlock, key); err != nil {
			s.log.Warn("unlock: closing the connection instead", "lock", key, "err", err)
			pc.Hijack().Close(context.Background())
			return
		}
		pc.Release()
	}, nil
}
