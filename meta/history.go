package meta

import (
	"time"

	"github.com/forkspace/forkspace/cas"
)

// HistoryTx is the part of a Tx that keeps the states audited calls
// produced (docs/decisions/016-time-travel.md). Drivers version staging
// rows so that recording a state costs one row whatever the workspace's
// delta, and reading one costs what reading a head's staging costs.
type HistoryTx interface {
	// RecordState records workspace workspaceID's current state (head root
	// and staging rows) as the state of audit entry seq, at time at. A
	// missing workspace is fs.ErrNotExist.
	RecordState(seq int64, workspaceID string, at time.Time) error
	// FindState returns the recorded state q names (fs.ErrNotExist if none).
	FindState(q StateQuery) (*State, error)
	// StateStaged returns the staging rows of the state recorded for audit
	// entry seq, ordered by key (fs.ErrNotExist if there is none).
	StateStaged(seq int64) ([]Staged, error)
	// PruneStates drops the recorded states of workspaceID (every
	// workspace if "") beyond its newest keep ones and those recorded
	// before before, and the staging history nothing else needs. It
	// returns how many states it dropped.
	PruneStates(workspaceID string, keep int, before time.Time) (int, error)
	// HistoryRefs returns the roots of a workspace's recorded states and
	// staging rows holding (at least) every row their deltas draw from:
	// roots of garbage collection.
	HistoryRefs(workspaceID string) (roots []cas.Hash, staged []Staged, err error)
}

// State is a workspace state an audited call produced.
type State struct {
	// Seq is the audit entry that recorded it.
	Seq         int64
	WorkspaceID string
	Time        time.Time
	// Root is the head's tree root; StateStaged has the delta on top.
	Root cas.Hash
}

// StateQuery names one recorded state: by Seq (of any workspace), or of
// workspace WorkspaceID the Back-th newest (0: the newest), or, when AsOf
// is set, the newest recorded at or before AsOf.
type StateQuery struct {
	Seq         int64
	WorkspaceID string
	Back        int
	AsOf        time.Time
}
