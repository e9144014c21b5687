package forkspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/forkspace/forkspace/audit"
	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/vfs"
)

// Every audited call records the state its workspace was left in (package
// audit; docs/decisions/016-time-travel.md). A state names one with
// "WS@~N" (N audited calls before the newest: "WS@~0" is the state after
// the newest), "WS@audit:SEQ" (after audit entry SEQ) or "WS@TIME" (RFC
// 3339: the newest recorded at or before TIME), wherever a checkpoint is
// accepted: Snapshot, Diff, Fork, Restore, At, merge and cherry-pick.

// ErrHistoryExpired is returned (wrapped) for a recorded state that is
// not, or no longer, kept: a step further back than the workspace's
// recorded history, an entry whose state the retention policy dropped, a
// time before the oldest kept step. errors.Is(err, fs.ErrNotExist) holds
// too.
var ErrHistoryExpired = fmt.Errorf("beyond retained history: %w", fs.ErrNotExist)

// ErrOtherWorkspace is returned (wrapped) for "WS@audit:SEQ" when entry SEQ
// recorded another workspace's call. errors.Is(err, fs.ErrInvalid) holds
// too.
var ErrOtherWorkspace = fmt.Errorf("audit entry of another workspace: %w", fs.ErrInvalid)

// stateKind marks the synthetic checkpoint rows findCheckpoint returns for
// recorded states; their ID is "audit:SEQ".
const stateKind = "audit-state"

const auditPrefix = "audit:"

// historyRef is a parsed reference to a recorded state.
type historyRef struct {
	back int
	seq  int64
	asOf time.Time
}

// parseHistoryRef reads the part after "@" of a state. ok is false for
// anything that is not of a recorded state's forms (a checkpoint ID or
// label); a malformed one of those forms is fs.ErrInvalid.
func parseHistoryRef(ref string) (h historyRef, ok bool, err error) {
	bad := func(want string) (historyRef, bool, error) {
		return h, true, fmt.Errorf("state @%s: %w: want %s", ref, fs.ErrInvalid, want)
	}
	switch {
	case strings.HasPrefix(ref, "~"):
		n, err := strconv.Atoi(ref[1:])
		if err != nil || n < 0 || ref[1:] != strconv.Itoa(n) {
			return bad("~N, N audited calls back (~0: after the newest)")
		}
		return historyRef{back: n}, true, nil
	case strings.HasPrefix(ref, auditPrefix):
		n, err := strconv.ParseInt(ref[len(auditPrefix):], 10, 64)
		if err != nil || n <= 0 {
			return bad("audit:SEQ, the sequence number of an audit entry")
		}
		return historyRef{seq: n}, true, nil
	case len(ref) >= 5 && ref[4] == '-' && strings.Trim(ref[:4], "0123456789") == "":
		t, err := time.Parse(time.RFC3339Nano, ref)
		if err != nil {
			return bad("an RFC 3339 time such as 2026-11-23T10:00:00Z")
		}
		return historyRef{asOf: t}, true, nil
	}
	return h, false, nil
}

// stateSeq returns the audit sequence number of a synthetic checkpoint ID
// of a recorded state.
func stateSeq(id string) (int64, bool) {
	if !strings.HasPrefix(id, auditPrefix) {
		return 0, false
	}
	n, err := strconv.ParseInt(id[len(auditPrefix):], 10, 64)
	return n, err == nil
}

// findState resolves a recorded state of workspace wsID as a synthetic
// checkpoint row (Kind stateKind, ID "audit:SEQ"). Retention applies at
// read time too: a state older than the policy's age is refused before
// garbage collection prunes it.
func findState(tx meta.Tx, wsID, ref string, h historyRef) (*meta.Checkpoint, error) {
	r, now, err := audit.Policy(tx)
	if err != nil {
		return nil, err
	}
	q := meta.StateQuery{Seq: h.seq, WorkspaceID: wsID, Back: h.back, AsOf: h.asOf}
	if h.seq == 0 && h.asOf.IsZero() && h.back >= r.Steps {
		return nil, fmt.Errorf("state @%s: %w (the newest %d steps are kept)", ref, ErrHistoryExpired, r.Steps)
	}
	st, err := tx.FindState(q)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, missingState(tx, wsID, ref, h)
	}
	if err != nil {
		return nil, err
	}
	if st.WorkspaceID != wsID {
		return nil, fmt.Errorf("state @%s: %w", ref, ErrOtherWorkspace)
	}
	if st.Time.Before(now.Add(-r.Age)) {
		return nil, fmt.Errorf("state @%s: %w (steps are kept for %s)", ref, ErrHistoryExpired, r.Age)
	}
	return &meta.Checkpoint{ID: auditPrefix + strconv.FormatInt(st.Seq, 10), WorkspaceID: wsID,
		Root: st.Root, CreatedAt: st.Time, Kind: stateKind}, nil
}

// missingState explains why no state matched: an audit entry that does not
// exist, one of another workspace, or a step not (or no longer) kept.
func missingState(tx meta.Tx, wsID, ref string, h historyRef) error {
	if h.seq != 0 {
		es, err := tx.Audit(meta.AuditFilter{Before: h.seq + 1, Limit: 1})
		if err != nil {
			return err
		}
		switch {
		case len(es) == 0 || es[0].Seq != h.seq:
			return fmt.Errorf("state @%s: no audit entry %d: %w", ref, h.seq, fs.ErrNotExist)
		case es[0].WorkspaceID != wsID:
			return fmt.Errorf("state @%s: %w", ref, ErrOtherWorkspace)
		}
	}
	return fmt.Errorf("state @%s: %w", ref, ErrHistoryExpired)
}

// stagedOf reads the staging delta of a checkpoint row, or of a recorded
// state's synthetic one.
func stagedOf(tx meta.Tx, c *meta.Checkpoint) ([]meta.Staged, error) {
	if c.Kind == stateKind {
		seq, _ := stateSeq(c.ID)
		return tx.StateStaged(seq)
	}
	return tx.CheckpointStaged(c.ID)
}

// foldState returns a tree root holding the whole recorded state seq (its
// delta folded in; the nodes are stored, nothing else is recorded).
func (s *Store) foldState(ctx context.Context, seq int64) (cas.Hash, error) {
	var (
		st     *meta.State
		staged []meta.Staged
	)
	err := s.meta.View(ctx, func(tx meta.Tx) (err error) {
		if st, err = tx.FindState(meta.StateQuery{Seq: seq}); err != nil {
			return err
		}
		staged, err = tx.StateStaged(seq)
		return err
	})
	if err != nil {
		return cas.Hash{}, fmt.Errorf("fold state of audit entry %d: %w", seq, err)
	}
	return vfs.Snapshot(s.deps(), st.Root, staged).Root(ctx)
}

// HistoryRetention returns the store's policy for recorded states.
func (s *Store) HistoryRetention(ctx context.Context) (audit.Retention, error) {
	return s.AuditLog().Retention(ctx)
}

// SetHistoryRetention sets the store's policy for recorded states (both
// bounds positive, fs.ErrInvalid otherwise); states past it are dropped at
// their workspace's next audited call or the next garbage collection.
func (s *Store) SetHistoryRetention(ctx context.Context, r audit.Retention) error {
	return s.AuditLog().SetRetention(ctx, r)
}

// Step is one audited call of a workspace with the state it left the
// workspace in.
type Step struct {
	Seq     int64     `json:"seq"`
	Time    time.Time `json:"time"`
	Tool    string    `json:"tool"`
	Actor   string    `json:"actor,omitempty"`
	Session string    `json:"session,omitempty"`
	// Error is the call's failure ("" if it succeeded; a failed call
	// changed nothing).
	Error   string   `json:"error,omitempty"`
	Changed []string `json:"changed"`
	// Command is an exec's command text (bounded, see audit.Command).
	Command string `json:"command,omitempty"`
	// State names the state the call left ("NAME@audit:SEQ"; "" once the
	// retention policy dropped it), Back the same as "NAME@~N" (only when
	// listing from the newest step).
	State string `json:"state,omitempty"`
	Back  string `json:"back,omitempty"`
}

// HistoryOptions page a workspace's history.
type HistoryOptions struct {
	// Limit bounds the steps returned (default 20).
	Limit int
	// Before lists steps with Seq < Before (0: from the newest).
	Before int64
}

// History lists workspace ref's audited calls, newest first, each with the
// paths it changed and the state it left (readable, diffable, forkable and
// restorable while retained).
func (s *Store) History(ctx context.Context, ref string, opts HistoryOptions) ([]Step, error) {
	w, err := s.Workspace(ctx, ref)
	if err != nil {
		return nil, fmt.Errorf("history of %s: %w", ref, err)
	}
	if opts.Limit < 0 || opts.Before < 0 {
		return nil, fmt.Errorf("history of %s: %w: limit and before must not be negative", ref, fs.ErrInvalid)
	}
	if opts.Limit == 0 {
		opts.Limit = 20
	}
	es, err := s.AuditLog().Entries(ctx, audit.Filter{WorkspaceID: w.id, Limit: opts.Limit, Before: opts.Before})
	if err != nil {
		return nil, fmt.Errorf("history of %s: %w", ref, err)
	}
	steps := make([]Step, len(es))
	back := 0
	for i, e := range es {
		steps[i] = Step{Seq: e.Seq, Time: e.Time, Tool: e.Tool, Actor: e.Actor, Session: e.Session, Error: e.Error,
			Changed: e.Changed, Command: e.Command}
		if steps[i].Changed == nil {
			steps[i].Changed = []string{}
		}
		if !e.State {
			continue
		}
		steps[i].State = w.name + "@" + auditPrefix + strconv.FormatInt(e.Seq, 10)
		if opts.Before == 0 {
			steps[i].Back = w.name + "@~" + strconv.Itoa(back)
			back++
		}
	}
	return steps, nil
}
