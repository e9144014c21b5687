package content

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"time"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/meta"
)

// Intents are the upload intents (meta.Tx.AddIntents) a commit holds on
// the chunks its manifest references, new and reused. They keep garbage
// collection from deleting those chunks until the metadata that references
// them commits: the caller releases them (meta.Tx.ReleaseIntents) in that
// same transaction, or with Store.Release if it abandons the commit.
type Intents []int64

// busyWait is how long a writer waits before retrying an intent on a blob
// the collector is deleting.
const busyWait = 2 * time.Millisecond

// addIntents records an intent on hashes in its own transaction, waiting
// while the collector deletes one of them (errdefs.ErrBusy). busy reports
// whether it had to wait: a blob it named may then be gone.
func (s *Store) addIntents(ctx context.Context, hashes []cas.Hash) (id int64, busy bool, err error) {
	for {
		err = s.opts.Meta.Update(ctx, func(tx meta.Tx) error {
			var err error
			id, err = tx.AddIntents(hashes)
			return err
		})
		if !errors.Is(err, errdefs.ErrBusy) {
			return id, busy, err
		}
		busy = true
		select {
		case <-time.After(busyWait):
		case <-ctx.Done():
			return 0, busy, fmt.Errorf("add upload intents: %w", ctx.Err())
		}
	}
}

// Release releases intents in a transaction of their own, for a caller
// that will not commit the metadata they were taken for. Releasing is
// idempotent; a nil or empty in does nothing.
func (s *Store) Release(ctx context.Context, in Intents) error {
	if len(in) == 0 {
		return nil
	}
	err := s.opts.Meta.Update(ctx, func(tx meta.Tx) error { return tx.ReleaseIntents(in) })
	if err != nil {
		return fmt.Errorf("release upload intents: %w", err)
	}
	return nil
}

// intentSet collects the intents of one commit from its put workers.
type intentSet struct {
	mu  sync.Mutex
	ids Intents
}

func (is *intentSet) add(id int64) {
	is.mu.Lock()
	is.ids = append(is.ids, id)
	is.mu.Unlock()
}

// holdReused takes an intent on the base chunks a manifest reuses without
// storing them. If the collector was deleting one of them meanwhile (the
// base had become unreachable), the chunks are checked and a vanished one
// fails the commit with fs.ErrNotExist: its bytes are gone and the draft
// never read them.
func (s *Store) holdReused(ctx context.Context, exts []Extent, fresh []*cas.Hash, is *intentSet) error {
	var reused []cas.Hash
	seen := map[cas.Hash]bool{}
	for i, e := range exts {
		if fresh[i] == nil && !e.Hash.IsZero() && !seen[e.Hash] {
			seen[e.Hash] = true
			reused = append(reused, e.Hash)
		}
	}
	if len(reused) == 0 {
		return nil
	}
	id, busy, err := s.addIntents(ctx, reused)
	if err != nil {
		return err
	}
	is.add(id)
	if !busy {
		return nil
	}
	for _, h := range reused {
		if _, err := s.opts.Blobs.Stat(ctx, h); err != nil {
			return fmt.Errorf("reuse base chunk %s: %w", h.Short(), errors.Join(fs.ErrNotExist, err))
		}
	}
	return nil
}
