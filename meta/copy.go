package meta

import (
	"errors"
	"fmt"
)

// CopyTx is what a Tx offers to move a whole store to another database
// (package storecopy): listings the rest of the contract has no call for,
// and writes that keep the times, sequence numbers and versions the other
// methods would assign themselves. Rows written through it must describe
// objects (workspaces, checkpoints, audit entries) written the usual way
// in the same or an earlier transaction, in the order the methods say.
// Every driver's Tx implements it (metatest RunCopy checks it); CopyOf
// finds it.
type CopyTx interface {
	// Settings returns every store-wide setting.
	Settings() (map[string]string, error)
	// Counters returns the next value of every counter Allocate serves
	// (a driver's own bookkeeping counters are not listed).
	Counters() (map[string]int64, error)
	// RaiseCounter makes the next value of the named counter at least
	// next (a counter already past it is left alone).
	RaiseCounter(name string, next int64) error
	// SessionRefsAll lists the session refs of every session, ordered by
	// session, then name.
	SessionRefsAll() ([]SessionRef, error)
	// States lists the recorded states of a workspace, oldest first.
	States(workspaceID string) ([]State, error)

	// ImportState records s as the newest state of its workspace, with
	// staged as its staging rows, as RecordState would have recorded it
	// (s.Seq must exceed the Seq of every state recorded so far:
	// fs.ErrInvalid otherwise; a missing workspace is fs.ErrNotExist). A
	// workspace's own staging rows must be put after its states are
	// imported.
	ImportState(s State, staged []Staged) error
	// ImportCheckpointStaged adds staging rows to a checkpoint, keeping
	// their Seq (a missing checkpoint is fs.ErrNotExist).
	ImportCheckpointStaged(checkpointID string, rows []Staged) error
	// ImportAudit appends entries keeping their Seq and Time. Their Seqs
	// must increase and exceed every existing entry's (fs.ErrInvalid
	// otherwise); AuditCounter is not advanced (RaiseCounter does that).
	ImportAudit(entries []AuditEntry) error
	// ImportConflicts is PutConflicts keeping each row's CreatedAt.
	ImportConflicts(rows []Conflict) error
	// ImportTenant records t, replacing the creation time of a tenant
	// already recorded.
	ImportTenant(t Tenant) error
	// ImportToken inserts k keeping its CreatedAt and RevokedAt (fs.ErrExist
	// if k.ID is taken).
	ImportToken(k Token) error
	// ImportSessionRef is PutSessionRef keeping r.UpdatedAt.
	ImportSessionRef(r SessionRef) error
}

// CopyOf returns tx's copy methods; a driver without them is
// errors.ErrUnsupported.
func CopyOf(tx Tx) (CopyTx, error) {
	if c, ok := tx.(CopyTx); ok {
		return c, nil
	}
	return nil, fmt.Errorf("metadata driver %T cannot copy a store: %w", tx, errors.ErrUnsupported)
}
