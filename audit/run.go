package audit

import (
	"context"
	"errors"
	"fmt"
	"time"
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
	if err == nil {
		start := time.Now()
		e.Changed, err = fn(ctx)
		e.Duration = time.Since(start)
		if c.Detail != nil {
			e.Detail = c.Detail()
		}
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
