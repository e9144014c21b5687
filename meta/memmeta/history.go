package memmeta

import (
	"bytes"
	"fmt"
	"slices"
	"time"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/meta"
)

// recorded is a state an audited call produced: staging tables are never
// modified once published, so the state shares its workspace's table
// instead of copying it.
type recorded struct {
	meta.State
	staged map[string]meta.Staged
	ord    int // its place in its workspace's history: 1 + the previous state's
}

var _ meta.HistoryTx = (*tx)(nil)

// RecordState implements meta.HistoryTx.
func (t *tx) RecordState(seq int64, workspaceID string, at time.Time) error {
	op := fmt.Sprintf("record state of workspace %q for audit entry %d", workspaceID, seq)
	if err := t.writable(op); err != nil {
		return err
	}
	w, ok := t.s.workspaces[workspaceID]
	if !ok {
		return notExist(op)
	}
	// The table is shared from now on: a later write in this Update
	// copies it first.
	if t.owned.staging != nil {
		t.owned.staging[workspaceID] = false
	}
	r := recorded{State: meta.State{Seq: seq, WorkspaceID: workspaceID, Time: at.Round(0), Root: w.Root}, staged: t.s.staging[workspaceID], ord: t.newestOrd(workspaceID) + 1}
	// As with the audit log, appending never changes what a published
	// state sees; pruning builds a new slice.
	t.s.history = append(t.s.history, r)
	return nil
}

// FindState implements meta.HistoryTx.
func (t *tx) FindState(q meta.StateQuery) (*meta.State, error) {
	back := q.Back
	for i := len(t.s.history) - 1; i >= 0; i-- {
		r := t.s.history[i]
		switch {
		case q.Seq != 0:
			if r.Seq == q.Seq {
				return &r.State, nil
			}
		case r.WorkspaceID != q.WorkspaceID:
		case !q.AsOf.IsZero():
			if !r.Time.After(q.AsOf) {
				return &r.State, nil
			}
		case back == 0:
			return &r.State, nil
		default:
			back--
		}
	}
	return nil, notExist(fmt.Sprintf("find state %+v", q))
}

// StateStaged implements meta.HistoryTx.
func (t *tx) StateStaged(seq int64) ([]meta.Staged, error) {
	for _, r := range t.s.history {
		if r.Seq == seq {
			return sortedRows(r.staged), nil
		}
	}
	return nil, notExist(fmt.Sprintf("read staging rows of the state of audit entry %d", seq))
}

// sortedRows copies a staging table's rows ordered by key.
func sortedRows(table map[string]meta.Staged) []meta.Staged {
	out := make([]meta.Staged, 0, len(table))
	for _, r := range table {
		r.Key, r.Value = bytes.Clone(r.Key), bytes.Clone(r.Value)
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b meta.Staged) int { return bytes.Compare(a.Key, b.Key) })
	return out
}

// PruneStates implements meta.HistoryTx: a state stays while it is among
// its workspace's newest keep states ever recorded (pruned ones count) and
// not older than before.
func (t *tx) PruneStates(workspaceID string, keep int, before time.Time) (int, error) {
	if err := t.writable(fmt.Sprintf("prune states of workspace %q", workspaceID)); err != nil {
		return 0, err
	}
	newest := map[string]int{}
	out := slices.DeleteFunc(slices.Clone(t.s.history), func(r recorded) bool {
		if workspaceID != "" && r.WorkspaceID != workspaceID {
			return false
		}
		n, ok := newest[r.WorkspaceID]
		if !ok {
			n = t.newestOrd(r.WorkspaceID)
			newest[r.WorkspaceID] = n
		}
		return r.ord <= n-keep || r.Time.Before(before)
	})
	dropped := len(t.s.history) - len(out)
	t.s.history = out
	return dropped, nil
}

// newestOrd is the place of workspaceID's newest recorded state, 0 if
// none is.
func (t *tx) newestOrd(workspaceID string) int {
	for i := len(t.s.history) - 1; i >= 0; i-- {
		if r := t.s.history[i]; r.WorkspaceID == workspaceID {
			return r.ord
		}
	}
	return 0
}

// dropHistory forgets the states of a deleted workspace.
func (t *tx) dropHistory(workspaceID string) {
	t.s.history = slices.DeleteFunc(slices.Clone(t.s.history), func(r recorded) bool { return r.WorkspaceID == workspaceID })
}

// hasState reports whether audit entry seq's state is recorded.
func (t *tx) hasState(seq int64) bool {
	return slices.ContainsFunc(t.s.history, func(r recorded) bool { return r.Seq == seq })
}

// HistoryRefs implements meta.HistoryTx.
func (t *tx) HistoryRefs(workspaceID string) ([]cas.Hash, []meta.Staged, error) {
	var (
		roots  []cas.Hash
		staged []meta.Staged
	)
	for _, r := range t.s.history {
		if r.WorkspaceID == workspaceID {
			roots = append(roots, r.Root)
			staged = append(staged, sortedRows(r.staged)...)
		}
	}
	return roots, staged, nil
}
