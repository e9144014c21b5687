package audit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/forkspace/forkspace/meta"
)

// ErrNotRecorded marks the error of a call Run could not record: the
// recording failure, joined to the call's own error if it had one.
var ErrNotRecorded = errors.New("not recorded in the audit log")

// CallError returns the error of the call itself from an error of Run:
// err when recording did not fail, nil when the call succeeded and only
// recording it failed.
func CallError(err error) error {
	if !errors.Is(err, ErrNotRecorded) {
		return err
	}
	j, ok := err.(interface{ Unwrap() []error })
	if !ok {
		return nil
	}
	for _, e := range j.Unwrap() {
		if !errors.Is(e, ErrNotRecorded) {
			return e
		}
	}
	return nil
}

// Entry is one recorded call (the row type of meta.AuditTx).
type Entry = meta.AuditEntry

// Filter selects entries for Log.Entries.
type Filter = meta.AuditFilter

// Recorder stores audit entries. Record must be safe for concurrent use.
type Recorder interface {
	Record(ctx context.Context, e Entry) error
}

// Log is the audit log kept in a metadata store.
type Log struct {
	meta meta.Store

	mu        sync.RWMutex
	listeners []func(Entry)
	before    []func()
}

var _ Recorder = (*Log)(nil)

// NewLog returns the audit log of m.
func NewLog(m meta.Store) *Log { return &Log{meta: m} }

// Record appends e (its Seq, and Time when zero, are assigned by the
// store) and, in the same transaction, records the state of e's workspace
// as the state the call produced (see history.go); then it hands e to the
// listeners (OnRecord).
func (l *Log) Record(ctx context.Context, e Entry) error {
	l.runBefore()
	return l.append(ctx, []Entry{e}, func(Entry) bool { return true })
}

// runBefore runs the BeforeRecord functions.
func (l *Log) runBefore() {
	l.mu.RLock()
	before := l.before
	l.mu.RUnlock()
	for _, fn := range before {
		fn()
	}
}

// BeforeRecord registers fn to run at the start of every Record, before
// its entry is appended, and of every Entries, before it reads: a
// recorder of changes noted after the fact (RecordAll) appends what it
// holds there, so the log keeps the order in which changes were made and
// a reader sees every change made before it asked.
func (l *Log) BeforeRecord(fn func()) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.before = append(l.before, fn)
}

// RecordAll appends es in one transaction, in order, then hands them to
// the listeners. es are changes no call covers (FUSE operations, mount
// work, library calls), noted after the fact in batches; it records a
// state, the head's at that moment, for those that step(e) says are steps
// of their workspace's history (nil: none). Such a state holds the
// entry's changes, and may hold changes noted in the next entry.
func (l *Log) RecordAll(ctx context.Context, es []Entry, step func(Entry) bool) error {
	return l.append(ctx, es, step)
}

func (l *Log) append(ctx context.Context, es []Entry, step func(Entry) bool) error {
	if len(es) == 0 {
		return nil
	}
	err := l.meta.Update(ctx, func(tx meta.Tx) error {
		for i := range es {
			if err := tx.AppendAudit(&es[i]); err != nil {
				return err
			}
			if step == nil || !step(es[i]) {
				continue
			}
			if err := recordState(tx, &es[i]); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("record audit entry %s: %w", es[0].Tool, err)
	}
	l.publish(es)
	return nil
}

// publish hands es, durable, to the listeners.
func (l *Log) publish(es []Entry) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	for _, fn := range l.listeners {
		for _, e := range es {
			fn(e)
		}
	}
}

// OnRecord registers fn to hear of every entry Record and RecordAll
// commit, on the recording goroutine, once it is durable. Entries of
// concurrent calls may arrive out of Seq order; a listener that needs
// order reads the log (package feed does).
func (l *Log) OnRecord(fn func(Entry)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.listeners = append(l.listeners, fn)
}

// Prune removes the entries recorded before before (meta.AuditTx.PruneAudit)
// and returns the highest Seq removed (0: none).
func (l *Log) Prune(ctx context.Context, before time.Time) (int64, error) {
	var through int64
	err := l.meta.Update(ctx, func(tx meta.Tx) error {
		var err error
		through, err = tx.PruneAudit(before)
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("prune audit log: %w", err)
	}
	return through, nil
}

// Forward returns the entries matching f oldest first (f.Ascending is
// implied) and, read in the same snapshot, the highest Seq pruned: when
// it is not below f.After, entries after f.After may be gone.
func (l *Log) Forward(ctx context.Context, f Filter) (es []Entry, pruned int64, err error) {
	f.Ascending = true
	err = l.meta.View(ctx, func(tx meta.Tx) error {
		if pruned, err = tx.AuditPruned(); err != nil {
			return err
		}
		es, err = tx.Audit(f)
		return err
	})
	if err != nil {
		return nil, 0, fmt.Errorf("read audit log: %w", err)
	}
	return es, pruned, nil
}

// Bounds returns the highest Seq pruned (entries after it are all kept)
// and the newest Seq recorded (at least pruned; 0 for an empty log).
func (l *Log) Bounds(ctx context.Context) (pruned, newest int64, err error) {
	err = l.meta.View(ctx, func(tx meta.Tx) error {
		if pruned, err = tx.AuditPruned(); err != nil {
			return err
		}
		es, err := tx.Audit(Filter{Limit: 1})
		newest = pruned
		if len(es) > 0 {
			newest = max(newest, es[0].Seq)
		}
		return err
	})
	if err != nil {
		return 0, 0, fmt.Errorf("read audit log bounds: %w", err)
	}
	return pruned, newest, nil
}

// Entries returns the entries matching f, newest first (oldest first
// with f.Ascending), after the BeforeRecord functions have run.
func (l *Log) Entries(ctx context.Context, f Filter) ([]Entry, error) {
	l.runBefore()
	var es []Entry
	err := l.meta.View(ctx, func(tx meta.Tx) error {
		var err error
		es, err = tx.Audit(f)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("read audit log: %w", err)
	}
	return es, nil
}
