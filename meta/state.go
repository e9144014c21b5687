package meta

import "github.com/forkspace/forkspace/cas"

// StateTx is the part of a Tx that moves whole workspace states. A state is
// a tree root plus a staging delta of at most a few thousand rows, so fork and
// checkpoint copy the delta (and restore writes it back) instead of folding it into the tree:
// their cost depends on the delta, never on the number of files.
type StateTx interface {
	// CopyStaged replaces the staging rows of workspace dst with a copy of
	// those of workspace src (a fork). Later changes to either never show
	// in the other, whatever happens to src (a fold, its deletion); the
	// SQL drivers store the copy as a reference to src's records
	// (docs/decisions/028). A missing workspace is fs.ErrNotExist.
	CopyStaged(src, dst string) error
	// SnapshotStaged replaces the staging rows of checkpoint checkpointID
	// with a copy of those of workspace workspaceID (a checkpoint).
	SnapshotStaged(workspaceID, checkpointID string) error
	// CheckpointStaged returns a checkpoint's staging rows ordered by key.
	CheckpointStaged(checkpointID string) ([]Staged, error)
	// FoldCheckpoint points a checkpoint at root and drops its staging
	// rows; root must be the checkpoint's root with those rows applied, so
	// the checkpoint's state does not change. A missing checkpoint is
	// fs.ErrNotExist.
	FoldCheckpoint(checkpointID string, root cas.Hash) error
	// UnfoldedCheckpoints lists the IDs of checkpoints that still have
	// staging rows.
	UnfoldedCheckpoints() ([]string, error)
}
