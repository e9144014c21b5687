package meta

import "time"

// SessionRefTx is the part of a Tx that keeps the provider refs of agent
// sessions (package provider): one row per (session, workspace name), the
// ref stored as opaque JSON.
type SessionRefTx interface {
	// PutSessionRef creates or replaces the row of (r.Session, r.Name).
	// Empty Session or Name is fs.ErrInvalid. UpdatedAt is set from the
	// database clock and written back into r.
	PutSessionRef(r *SessionRef) error
	// SessionRef returns the row of (session, name) (fs.ErrNotExist if
	// absent).
	SessionRef(session, name string) (*SessionRef, error)
	// SessionRefs lists the rows of a session ordered by name.
	SessionRefs(session string) ([]SessionRef, error)
	// DeleteSessionRef removes the row of (session, name); removing an
	// absent row is not an error.
	DeleteSessionRef(session, name string) error
}

// SessionRef is the persisted provider ref of one workspace of an agent
// session.
type SessionRef struct {
	Session   string
	Name      string
	Ref       []byte
	UpdatedAt time.Time
}
