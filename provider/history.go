package provider

import (
	"context"
	"time"
)

// Historian is the optional part of a Snapshots module that lists the
// workspace's audited steps with the state each left (localprovider and
// memprovider have it; see forkspace.Store.History).
type Historian interface {
	// History returns the newest limit steps, newest first.
	History(ctx context.Context, limit int) ([]Step, error)
}

// Step is one audited call and the state it left the workspace in.
type Step struct {
	Seq     int64     `json:"seq"`
	Time    time.Time `json:"time"`
	Tool    string    `json:"tool"`
	Error   string    `json:"error,omitempty" jsonschema:"the call's failure; a failed call changed nothing"`
	Changed []string  `json:"changed"`
	Command string    `json:"command,omitempty" jsonschema:"the shell command of an exec"`
	// State and Back name the state the call left, as a checkpoint of
	// this workspace is named in Snapshots calls: "audit:SEQ" and "~N"
	// (N steps before the newest); "" once the retention policy dropped it.
	State string `json:"state,omitempty" jsonschema:"the state after this step, for diff and restore: audit:SEQ"`
	Back  string `json:"back,omitempty" jsonschema:"the same state as ~N, N steps before the newest"`
}
