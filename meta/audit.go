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
	// Audit returns the entries matching f, newest (highest Seq) first.
	Audit(f AuditFilter) ([]AuditEntry, error)
}

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
	// Limit bounds how many entries are returned.
	Limit int
}
