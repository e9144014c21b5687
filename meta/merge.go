package meta

import "time"

// MergeTx is the part of a Tx that keeps merge conflicts: one row per
// path of a workspace that an unfinished merge could not merge.
type MergeTx interface {
	// PutConflicts inserts or replaces conflict rows (by workspace and
	// path). A missing workspace is fs.ErrNotExist.
	PutConflicts(rows []Conflict) error
	// Conflicts lists a workspace's conflicts by path.
	Conflicts(workspaceID string) ([]Conflict, error)
	// DeleteConflict removes one conflict row (fs.ErrNotExist if absent).
	DeleteConflict(workspaceID, path string) error
}

// Conflict is one path a merge could not merge.
type Conflict struct {
	WorkspaceID string
	Path        string
	// Kind names the clash ("content", "delete/modify", …; see package
	// merge).
	Kind string
	// Detail says more, in words.
	Detail string
	// Base, Ours and Theirs are the three versions of the path.
	Base, Ours, Theirs ConflictSide
	CreatedAt          time.Time
}

// ConflictSide is one version of a conflicting path: the checkpoint that
// holds it, the path there, and the BLAKE3 (hex) of what the path held
// ("" for nothing).
type ConflictSide struct {
	State string
	Path  string
	Hash  string
}
