package sqltx

import (
	"database/sql"
	"fmt"
	"io/fs"

	"github.com/forkspace/forkspace/meta"
)

const (
	qPutSessionRef = `INSERT INTO session_refs (session, name, ref, updated_at)
		VALUES ($1, $2, $3, COALESCE($4, ` + nowFunc + `()))
		ON CONFLICT (session, name) DO UPDATE SET ref = excluded.ref, updated_at = excluded.updated_at
		RETURNING updated_at`
	qSessionRef       = `SELECT session, name, ref, updated_at FROM session_refs WHERE session = $1 AND name = $2`
	qSessionRefs      = `SELECT session, name, ref, updated_at FROM session_refs WHERE session = $1 ORDER BY name`
	qDeleteSessionRef = `DELETE FROM session_refs WHERE session = $1 AND name = $2`
)

// PutSessionRef implements meta.Tx.
func (t *Tx) PutSessionRef(r *meta.SessionRef) error { return t.putSessionRef(r, nil) }

// ImportSessionRef implements meta.CopyTx.
func (t *Tx) ImportSessionRef(r meta.SessionRef) error {
	return t.putSessionRef(&r, toNanos(r.UpdatedAt))
}

// putSessionRef writes r, updated at updated (nil: now).
func (t *Tx) putSessionRef(r *meta.SessionRef, updated any) error {
	op := fmt.Sprintf("put session ref %q/%q", r.Session, r.Name)
	if r.Session == "" || r.Name == "" {
		return fmt.Errorf("%s: %w: empty session or name", op, fs.ErrInvalid)
	}
	var at int64
	if err := t.queryRow(op, true, qPutSessionRef, []any{r.Session, r.Name, r.Ref, updated}, &at); err != nil {
		return err
	}
	r.UpdatedAt = fromNanos(at)
	return nil
}

// SessionRef implements meta.Tx.
func (t *Tx) SessionRef(session, name string) (*meta.SessionRef, error) {
	op := fmt.Sprintf("get session ref %q/%q", session, name)
	var rows []meta.SessionRef
	err := t.query(op, qSessionRef, []any{session, name}, func(r *sql.Rows) error {
		return scanSessionRef(r, &rows)
	})
	if err != nil {
		return nil, err
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: %w", op, errNoRow)
	}
	return &rows[0], nil
}

// SessionRefs implements meta.Tx.
func (t *Tx) SessionRefs(session string) ([]meta.SessionRef, error) {
	var rows []meta.SessionRef
	err := t.query(fmt.Sprintf("list session refs of %q", session), qSessionRefs, []any{session},
		func(r *sql.Rows) error { return scanSessionRef(r, &rows) })
	return rows, err
}

// DeleteSessionRef implements meta.Tx.
func (t *Tx) DeleteSessionRef(session, name string) error {
	_, err := t.exec(fmt.Sprintf("delete session ref %q/%q", session, name), qDeleteSessionRef, session, name)
	return err
}

func scanSessionRef(r *sql.Rows, rows *[]meta.SessionRef) error {
	var (
		row     meta.SessionRef
		updated int64
	)
	if err := r.Scan(&row.Session, &row.Name, &row.Ref, &updated); err != nil {
		return err
	}
	row.UpdatedAt = fromNanos(updated)
	*rows = append(*rows, row)
	return nil
}
