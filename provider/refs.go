package provider

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/meta"
)

// RefStore persists the refs of sessions' workspaces, so a new Manager
// (after a restart) resolves them instead of opening new ones. All methods
// are safe for concurrent use.
type RefStore interface {
	// PutRef creates or replaces the ref of workspace name of session.
	PutRef(ctx context.Context, session, name string, ref Ref) error
	// Ref returns the ref of workspace name of session (fs.ErrNotExist if
	// none was stored).
	Ref(ctx context.Context, session, name string) (Ref, error)
	// Refs returns every stored ref of session by workspace name.
	Refs(ctx context.Context, session string) (map[string]Ref, error)
	// DeleteRef removes it; removing an absent ref is not an error.
	DeleteRef(ctx context.Context, session, name string) error
}

// MetaRefs returns a RefStore over a metadata store: refs are rows of the
// session_refs table, stored as JSON.
func MetaRefs(db meta.Store) RefStore { return metaRefs{db} }

type metaRefs struct{ db meta.Store }

var _ RefStore = metaRefs{}

func (m metaRefs) PutRef(ctx context.Context, session, name string, ref Ref) error {
	data, err := json.Marshal(ref)
	if err != nil {
		return fmt.Errorf("put ref %s/%s: %w", session, name, err)
	}
	err = m.db.Update(ctx, func(tx meta.Tx) error {
		return tx.PutSessionRef(&meta.SessionRef{Session: session, Name: name, Ref: data})
	})
	if err != nil {
		return fmt.Errorf("put ref %s/%s: %w", session, name, err)
	}
	return nil
}

func (m metaRefs) Ref(ctx context.Context, session, name string) (Ref, error) {
	var row *meta.SessionRef
	err := m.db.View(ctx, func(tx meta.Tx) error {
		var err error
		row, err = tx.SessionRef(session, name)
		return err
	})
	if err != nil {
		return Ref{}, fmt.Errorf("get ref %s/%s: %w", session, name, err)
	}
	ref, err := decodeRef(row.Ref)
	if err != nil {
		return Ref{}, fmt.Errorf("get ref %s/%s: %w", session, name, err)
	}
	return ref, nil
}

func (m metaRefs) Refs(ctx context.Context, session string) (map[string]Ref, error) {
	var rows []meta.SessionRef
	err := m.db.View(ctx, func(tx meta.Tx) error {
		var err error
		rows, err = tx.SessionRefs(session)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list refs of %s: %w", session, err)
	}
	out := make(map[string]Ref, len(rows))
	for _, row := range rows {
		if out[row.Name], err = decodeRef(row.Ref); err != nil {
			return nil, fmt.Errorf("list refs of %s: %s: %w", session, row.Name, err)
		}
	}
	return out, nil
}

func decodeRef(data []byte) (Ref, error) {
	var ref Ref
	if err := json.Unmarshal(data, &ref); err != nil {
		return Ref{}, fmt.Errorf("%w: %w", errdefs.ErrCorrupt, err)
	}
	return ref, nil
}

func (m metaRefs) DeleteRef(ctx context.Context, session, name string) error {
	err := m.db.Update(ctx, func(tx meta.Tx) error { return tx.DeleteSessionRef(session, name) })
	if err != nil {
		return fmt.Errorf("delete ref %s/%s: %w", session, name, err)
	}
	return nil
}
