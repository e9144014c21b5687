package audit

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/forkspace/forkspace/meta"
)

// Call describes one mutating call for Run.
type Call struct {
	// WorkspaceID is the workspace the call changes.
	WorkspaceID string
	// Tool names the call ("write", "exec", "library.WriteFile"…).
	Tool string
	// Args are the call's arguments; only their Digest is recorded.
	Args any
	// Checkpoint, when set, is called before the call with a label naming
	// it and returns the ID of the checkpoint it took, recorded in
	// Entry.Checkpoint so the call can be rewound. When it fails the call
	// does not run and the failure is recorded and returned.
	Checkpoint func(ctx context.Context, label string) (string, error)
	// Detail, when set, is called after the call and its result recorded
	// in Entry.Detail.
	Detail func() string
	// Command is the shell command the call runs (exec), recorded bounded
	// (see Command).
	Command string
}

// Label is the checkpoint label Run uses for a call to tool.
func Label(tool string) string { return "auto: before " + tool }

// Run runs fn, which returns the workspace paths it changed, and records
// one Entry in r: the actor of ctx (WithActor), c's workspace, tool and
// argument digest, fn's duration, its outcome and changed paths, and the
// automatic checkpoint. It returns fn's error. When fn succeeds but
// recording fails, the mutation stands and Run returns the recording
// error (wrapped, matching ErrNotRecorded), so a caller never believes an unrecorded call was
// audited. A nil r only runs the checkpoint and fn. Recording ignores
// cancellation of ctx: a call that ran is always logged.
func Run(ctx context.Context, r Recorder, c Call, fn func(context.Context) ([]string, error)) error {
	a := ActorFrom(ctx)
	e := Entry{WorkspaceID: c.WorkspaceID, Tool: c.Tool, Actor: a.Name, Session: a.Session, Command: Command(c.Command)}
	digest, err := Digest(c.Args)
	if err == nil && c.Checkpoint != nil {
		var id string
		if id, err = c.Checkpoint(ctx, Label(c.Tool)); err != nil {
			err = fmt.Errorf("checkpoint before %s: %w", c.Tool, err)
		} else {
			e.Checkpoint = id
		}
	}
	e.ArgsDigest = digest
	if r != nil {
		ctx = Cover(ctx, c.WorkspaceID)
	}
	var p *pending
	if err == nil {
		start := time.Now()
		if l, ok := r.(*Log); ok && c.Detail == nil {
			p = &pending{log: l, e: e, start: start}
			ctx = context.WithValue(ctx, pendingKey{}, p)
		}
		e.Changed, err = fn(ctx)
		e.Duration = time.Since(start)
		if c.Detail != nil {
			e.Detail = c.Detail()
		}
	}
	if p != nil && p.result() {
		if err == nil {
			return nil
		}
		// fn failed after the mutation that carried its entry (against
		// Commit's contract): the failure is recorded too.
	}
	if err != nil {
		e.Error = err.Error()
	}
	if r == nil {
		return err
	}
	if rerr := r.Record(context.WithoutCancel(ctx), e); rerr != nil {
		return errors.Join(err, fmt.Errorf("%w: %w", ErrNotRecorded, rerr))
	}
	return err
}

type pendingKey struct{}

// pending is the entry of a call Run runs that the call's last mutation
// may append in its own transaction (Commit).
type pending struct {
	log   *Log
	e     Entry // who, what, checkpoint
	start time.Time

	mu        sync.Mutex
	offered   bool  // Commit handed out the work
	staged    Entry // as the last transaction running the work appended it
	committed bool  // that transaction is durable
}

// Commit, under the context Run passes its function, returns the work
// that appends the call's entry in the metadata transaction of the
// call's last mutation, for vfs.WithCommit: fn appends the entry —
// outcome ok, changed the paths given, its duration up to that
// transaction — and records the workspace's state as its state (as
// Record does), and done, called once that transaction is durable, hands
// the entry to the log's listeners. The entry commits with the mutation,
// in one transaction where Run would take a second. Commit runs the log's
// BeforeRecord functions first, so what was noted before it is appended
// before the entry.
//
// It is for a call whose last act is one vfs operation that commits a
// single mutation and whose result is the call's: when that operation
// fails or commits nothing, Run records the entry itself, as usual (with
// the error; a call that ran is always logged). A function that fails
// after the mutation carried its entry breaks the contract; Run then
// records a second entry with the failure. Commit returns nils outside a
// function Run runs with a Log (a plain Recorder, a Call with Detail),
// and on a second call in one Run.
func Commit(ctx context.Context, changed []string) (fn func(meta.Tx) error, done func()) {
	p, _ := ctx.Value(pendingKey{}).(*pending)
	if p == nil {
		return nil, nil
	}
	p.mu.Lock()
	offered := p.offered
	p.offered = true
	p.mu.Unlock()
	if offered {
		return nil, nil
	}
	p.log.runBefore()
	fn = func(tx meta.Tx) error {
		e := p.e
		e.Changed, e.Duration = changed, time.Since(p.start)
		if err := tx.AppendAudit(&e); err != nil {
			return fmt.Errorf("record audit entry %s: %w", e.Tool, err)
		}
		if err := recordState(tx, &e); err != nil {
			return fmt.Errorf("record audit entry %s: %w", e.Tool, err)
		}
		p.mu.Lock()
		p.staged = e
		p.mu.Unlock()
		return nil
	}
	done = func() {
		p.mu.Lock()
		p.committed = true
		e := p.staged
		p.mu.Unlock()
		p.log.publish([]Entry{e})
	}
	return fn, done
}

// result reports whether a mutation committed the entry.
func (p *pending) result() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.committed
}
