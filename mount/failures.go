package mount

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/meta"
)

// failedKey is the setting that holds a workspace's index failure
// records: root → indexFailure.
func failedKey(workspaceID string) string { return "mount.failed." + workspaceID }

// indexFailure is the record of a mount whose index keeps failing.
type indexFailure struct {
	At    time.Time `json:"at"`
	Count int       `json:"count"`
	Err   string    `json:"err"`
	Class string    `json:"class,omitempty"` // failureClasses key
}

// failureClasses keep an error's class across processes, so a skipped
// index reports the exit code the failure had.
var failureClasses = map[string]error{
	"permission":  fs.ErrPermission,
	"not-found":   fs.ErrNotExist,
	"invalid":     fs.ErrInvalid,
	"quota":       errdefs.ErrQuota,
	"unavailable": ErrUnavailable,
}

// Retry spacing of a failing first index: 10s after the first failure,
// doubling up to 10 minutes.
const (
	firstBackoff = 10 * time.Second
	maxBackoff   = 10 * time.Minute
)

func (f indexFailure) backoff() time.Duration {
	d := firstBackoff
	for i := 1; i < f.Count && d < maxBackoff; i++ {
		d *= 2
	}
	return min(d, maxBackoff)
}

// failures reads the records.
func (m *Manager) failures(ctx context.Context) (map[string]indexFailure, error) {
	var raw string
	err := m.cfg.Meta.View(ctx, func(tx meta.Tx) error {
		var err error
		raw, err = tx.Setting(failedKey(m.cfg.Context.WorkspaceID))
		return err
	})
	out := map[string]indexFailure{}
	if isNotExist(err) {
		return out, nil
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(raw), &out); err != nil {
		return nil, fmt.Errorf("%w: index failure records: %w", errdefs.ErrCorrupt, err)
	}
	return out, nil
}

// recordFailure updates mt's record: failed (nil clears it).
func (m *Manager) recordFailure(ctx context.Context, mt *mounted, failed error) error {
	m.failMu.Lock()
	defer m.failMu.Unlock()
	recs, err := m.failures(ctx)
	if err != nil {
		return err
	}
	old, had := recs[mt.spec.Root]
	if failed == nil {
		if !had {
			return nil
		}
		delete(recs, mt.spec.Root)
	} else {
		rec := indexFailure{At: time.Now().UTC(), Count: old.Count + 1, Err: failed.Error()}
		for name, class := range failureClasses {
			if errors.Is(failed, class) {
				rec.Class = name
			}
		}
		recs[mt.spec.Root] = rec
	}
	b, err := json.Marshal(recs)
	if err != nil {
		return err
	}
	return m.cfg.Meta.Update(ctx, func(tx meta.Tx) error {
		return tx.SetSetting(failedKey(m.cfg.Context.WorkspaceID), string(b))
	})
}

// backingOff returns the recorded failure of mt while its backoff lasts
// (the first index then skips it), else nil.
func (m *Manager) backingOff(ctx context.Context, mt *mounted) error {
	recs, err := m.failures(ctx)
	if err != nil {
		return err
	}
	rec, ok := recs[mt.spec.Root]
	if !ok {
		return nil
	}
	next := rec.At.Add(rec.backoff())
	if !time.Now().Before(next) {
		return nil
	}
	cause := errors.New(rec.Err)
	if class, ok := failureClasses[rec.Class]; ok {
		cause = fmt.Errorf("%w: %w", class, cause)
	}
	return fmt.Errorf("mount %s not indexed: %d failed attempts, next at %s ('mount refresh' retries now): %w",
		mt.spec.Root, rec.Count, next.Format(time.RFC3339), cause)
}
