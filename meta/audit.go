package meta

import "time"

// AuditTx is the part of a Tx that keeps the audit log: one append-only row
// per mutating call made through the tools, MCP, exec or an audited library
// handle (package audit writes and reads it).
type AuditTx interface {
	// AppendAudit appends e to the audit log. It assigns e.Seq from the
	// counter AuditCounter (increasing store-wide, never reused) and, when
	// e.Time is zero, sets it from the database clock; both are written
	// back into e. Rows are never changed afterwards.
	AppendAudit(e *AuditEntry) error
	// Audit returns the entries matching f, newest (highest Seq) first,
	// or oldest first with f.Ascending.
	Audit(f AuditFilter) ([]AuditEntry, error)
	// PruneAudit removes every entry up to the newest one recorded before
	// before (by Time), so what is left is a suffix of the log in Seq
	// order, and returns the highest Seq removed (0: none). AuditPruned
	// reports that mark from then on.
	PruneAudit(before time.Time) (through int64, err error)
	// AuditPruned returns the highest Seq PruneAudit ever removed (0:
	// nothing was pruned): entries after it are all kept.
	AuditPruned() (int64, error)
}

// AuditPrunedSetting is the setting that keeps AuditPruned's mark.
const AuditPrunedSetting = "audit_pruned"

// AuditCounter is the counter AppendAudit allocates sequence numbers from.
const AuditCounter = "audit"

// AuditEntry is one row of the audit log. It holds a digest of the call's
// arguments, never the arguments themselves (file contents stay out of it).
type AuditEntry struct {
	Seq  int64     `json:"seq"`
	Time time.Time `json:"time"`
	// WorkspaceID is the workspace the call changed ("" for store-wide
	// calls such as creating a workspace that failed).
	WorkspaceID string `json:"workspace_id,omitempty"`
	Actor       string `json:"actor,omitempty"`
	Session     string `json:"session,omitempty"`
	// Tool names the call ("write", "exec", "library.Remove"…).
	Tool string `json:"tool"`
	// ArgsDigest identifies the arguments (package audit: BLAKE3 of their
	// canonical JSON, hex).
	ArgsDigest string `json:"args_digest,omitempty"`
	// Error is the failure text; "" means the call succeeded.
	Error    string        `json:"error,omitempty"`
	Duration time.Duration `json:"duration_ns"`
	// Changed lists the workspace paths the call changed.
	Changed []string `json:"changed,omitempty"`
	// Checkpoint is the checkpoint taken automatically before the call
	// ("" if none), to which the workspace can be restored to undo it.
	Checkpoint string `json:"checkpoint,omitempty"`
	// Detail is what the call reported besides its error: for exec, how
	// the command ended and what it used ("exit code 0; 1.20s CPU, …").
	Detail string `json:"detail,omitempty"`
	// Command is the text of the shell command an exec ran, at most
	// audit.MaxCommand bytes (cut and marked beyond).
	Command string `json:"command,omitempty"`
	// State reports, when reading, that the state the call produced is
	// still recorded (HistoryTx): it can be named "WS@audit:SEQ".
	State bool `json:"state,omitempty"`
}

// AuditFilter selects audit entries. Zero fields do not filter.
type AuditFilter struct {
	WorkspaceID string
	Session     string
	// Before keeps entries with Seq < Before (paging backwards).
	Before int64
	// After keeps entries with Seq > After (paging forwards, with
	// Ascending; the change feed).
	After int64
	// Ascending returns the oldest entries first.
	Ascending bool
	// Limit bounds how many entries are returned.
	Limit int
}
