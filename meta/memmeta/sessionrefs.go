package memmeta

import (
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"

	"github.com/forkspace/forkspace/meta"
)

func sessionRefKey(session, name string) string { return session + "\x00" + name }

// PutSessionRef implements meta.Tx.
func (t *tx) PutSessionRef(r *meta.SessionRef) error { return t.putSessionRef(r, false) }

// ImportSessionRef implements meta.CopyTx.
func (t *tx) ImportSessionRef(r meta.SessionRef) error { return t.putSessionRef(&r, true) }

// putSessionRef writes r, updated now or, with keepTime, at r.UpdatedAt.
func (t *tx) putSessionRef(r *meta.SessionRef, keepTime bool) error {
	op := fmt.Sprintf("put session ref %q/%q", r.Session, r.Name)
	if r.Session == "" || r.Name == "" {
		return fmt.Errorf("%s: %w: empty session or name", op, fs.ErrInvalid)
	}
	if err := t.write(op, "sessionRefs", func() { t.s.sessionRefs = maps.Clone(t.s.sessionRefs) }); err != nil {
		return err
	}
	if !keepTime || r.UpdatedAt.IsZero() {
		r.UpdatedAt = t.store.now()
	}
	r.UpdatedAt = r.UpdatedAt.Round(0)
	row := *r
	row.Ref = slices.Clone(r.Ref)
	t.s.sessionRefs[sessionRefKey(r.Session, r.Name)] = row
	return nil
}

// SessionRef implements meta.Tx.
func (t *tx) SessionRef(session, name string) (*meta.SessionRef, error) {
	row, ok := t.s.sessionRefs[sessionRefKey(session, name)]
	if !ok {
		return nil, notExist(fmt.Sprintf("get session ref %q/%q", session, name))
	}
	row.Ref = slices.Clone(row.Ref)
	return &row, nil
}

// SessionRefs implements meta.Tx.
func (t *tx) SessionRefs(session string) ([]meta.SessionRef, error) {
	var out []meta.SessionRef
	for _, row := range t.s.sessionRefs {
		if row.Session == session {
			row.Ref = slices.Clone(row.Ref)
			out = append(out, row)
		}
	}
	slices.SortFunc(out, func(a, b meta.SessionRef) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// DeleteSessionRef implements meta.Tx.
func (t *tx) DeleteSessionRef(session, name string) error {
	op := fmt.Sprintf("delete session ref %q/%q", session, name)
	if err := t.write(op, "sessionRefs", func() { t.s.sessionRefs = maps.Clone(t.s.sessionRefs) }); err != nil {
		return err
	}
	delete(t.s.sessionRefs, sessionRefKey(session, name))
	return nil
}
