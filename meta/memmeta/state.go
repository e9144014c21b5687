package memmeta

import (
	"maps"
	"time"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/meta"
)

// state is one snapshot of the database. A published state is never
// modified; an Update works on a successor whose tables are shared with
// its predecessor until the first write copies them (see own).
type state struct {
	settings    map[string]string
	counters    map[string]int64
	nodes       map[cas.Hash]object
	inline      map[cas.Hash]object
	workspaces  map[string]meta.Workspace
	checkpoints map[string]meta.Checkpoint
	// staging maps workspace ID → key → row.
	staging map[string]map[string]meta.Staged
	// intents are the upload intents, oldest first.
	intents []meta.Intent
	// condemned maps a blob the collector condemned to whether it is
	// being deleted.
	condemned map[cas.Hash]bool
	// sessionRefs maps sessionRefKey(session, name) → row.
	sessionRefs map[string]meta.SessionRef
	// audit is the audit log in Seq order; appends never change a
	// published state's prefix (memmeta/audit.go).
	audit []meta.AuditEntry
	// conflicts maps workspace ID → path → conflict row.
	conflicts map[string]map[string]meta.Conflict
	// tenants maps a name to its creation time; tokens an ID to its row.
	tenants map[string]time.Time
	tokens  map[string]meta.Token
	// history holds the states audited calls produced, in Seq order
	// (memmeta/history.go).
	history []recorded
	// packs and packEntries are the pack index (memmeta/packs.go); a
	// pack's live counts are computed when listed.
	packs       map[cas.Hash]meta.Pack
	packEntries map[cas.Hash]meta.PackEntry
}

// object is a stored node or inline body and its touch time.
type object struct {
	data    []byte
	touched time.Time
}

func newState() *state {
	return &state{
		settings:    map[string]string{},
		counters:    map[string]int64{},
		nodes:       map[cas.Hash]object{},
		inline:      map[cas.Hash]object{},
		workspaces:  map[string]meta.Workspace{},
		checkpoints: map[string]meta.Checkpoint{},
		staging:     map[string]map[string]meta.Staged{},
		condemned:   map[cas.Hash]bool{},
		sessionRefs: map[string]meta.SessionRef{},
		conflicts:   map[string]map[string]meta.Conflict{},
		tenants:     map[string]time.Time{meta.DefaultTenant: time.Now().UTC().Round(0)},
		tokens:      map[string]meta.Token{},
		packs:       map[cas.Hash]meta.Pack{},
		packEntries: map[cas.Hash]meta.PackEntry{},
	}
}

// owned records which tables (and which workspaces' staging tables) an
// Update has already copied.
type owned struct {
	tables  map[string]bool
	staging map[string]bool
}

// own makes the named table of s private to the Update before its first
// write: copy is called once per table per Update.
func (o *owned) own(name string, copyTable func()) {
	if o.tables == nil {
		o.tables = map[string]bool{}
	}
	if !o.tables[name] {
		copyTable()
		o.tables[name] = true
	}
}

// ownStaging makes a workspace's staging table writable, creating it.
func (o *owned) ownStaging(s *state, workspaceID string) map[string]meta.Staged {
	o.own("staging", func() { s.staging = maps.Clone(s.staging) })
	if o.staging == nil {
		o.staging = map[string]bool{}
	}
	rows := s.staging[workspaceID]
	if !o.staging[workspaceID] {
		rows = maps.Clone(rows)
		if rows == nil {
			rows = map[string]meta.Staged{}
		}
		s.staging[workspaceID] = rows
		o.staging[workspaceID] = true
	}
	return rows
}
