package sqltx

import (
	"database/sql"
	"fmt"
	"time"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/meta"
)

// The garbage-collection tables (migration 0002): upload_intents and
// gc_condemned, and the touched_at columns of nodes and inline_bodies.
const (
	qDeletingOne    = `SELECT COUNT(*) FROM gc_condemned WHERE hash = $1 AND state = 'deleting'`
	qAddIntent      = `INSERT INTO upload_intents (id, hash, created_at) VALUES ($1, $2, ` + nowFunc + `()) ON CONFLICT DO NOTHING`
	qReleaseIntent  = `UPDATE upload_intents SET released = TRUE WHERE id = $1`
	qIntents        = `SELECT id, hash, created_at, released FROM upload_intents`
	qForgetReleased = `DELETE FROM upload_intents WHERE released AND created_at < $1`
	qForgetPending  = `DELETE FROM upload_intents WHERE NOT released AND created_at < $1`
	qNodeInfos      = `SELECT hash, length(data), touched_at FROM nodes`
	qInlineInfos    = `SELECT hash, length(data), touched_at FROM inline_bodies`
	qDeleteNode     = `DELETE FROM nodes WHERE hash = $1 AND touched_at < $2`
	qDeleteInline   = `DELETE FROM inline_bodies WHERE hash = $1 AND touched_at < $2`
	qCondemn        = `INSERT INTO gc_condemned (hash, state) VALUES ($1, 'condemned') ON CONFLICT (hash) DO NOTHING`
	qReprieve       = `DELETE FROM gc_condemned WHERE state = 'condemned' AND hash IN
		(SELECT hash FROM upload_intents WHERE NOT released OR created_at >= $1)`
	qMarkDeleting = `UPDATE gc_condemned SET state = 'deleting' WHERE state = 'condemned'`
	qDeleting     = `SELECT hash FROM gc_condemned WHERE state = 'deleting'`
	qCondemned    = `SELECT hash, state FROM gc_condemned`
	qUncondemn    = `DELETE FROM gc_condemned WHERE hash = $1`
)

// intentCounter is the counter that numbers upload intents.
const intentCounter = "upload_intent"

// AddIntents implements meta.Tx.
func (t *Tx) AddIntents(hashes []cas.Hash) (int64, error) {
	const op = "add upload intents"
	for _, h := range hashes {
		var n int
		if err := t.queryRow(op, false, qDeletingOne, []any{h[:]}, &n); err != nil {
			return 0, err
		}
		if n > 0 {
			return 0, fmt.Errorf("%s: blob %s: %w: being deleted by the collector", op, h.Short(), errdefs.ErrBusy)
		}
	}
	id, err := t.Allocate(intentCounter, 1)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", op, err)
	}
	for _, h := range hashes {
		if _, err := t.exec(op, qAddIntent, id, h[:]); err != nil {
			return 0, err
		}
	}
	return id, nil
}

// ReleaseIntents implements meta.Tx.
func (t *Tx) ReleaseIntents(ids []int64) error {
	for _, id := range ids {
		if _, err := t.exec("release upload intents", qReleaseIntent, id); err != nil {
			return err
		}
	}
	return nil
}

// Intents implements meta.Tx.
func (t *Tx) Intents(fn func(meta.Intent) error) error {
	return t.query("list upload intents", qIntents, nil, func(rows *sql.Rows) error {
		var (
			in meta.Intent
			h  []byte
			ns int64
		)
		if err := rows.Scan(&in.ID, &h, &ns, &in.Released); err != nil {
			return err
		}
		var err error
		if in.Hash, err = scanHash(h); err != nil {
			return err
		}
		in.CreatedAt = fromNanos(ns)
		return fn(in)
	})
}

// ForgetIntents implements meta.Tx.
func (t *Tx) ForgetIntents(released, pending time.Time) error {
	const op = "forget upload intents"
	if _, err := t.exec(op, qForgetReleased, released.UnixNano()); err != nil {
		return err
	}
	_, err := t.exec(op, qForgetPending, pending.UnixNano())
	return err
}

// Nodes implements meta.Tx.
func (t *Tx) Nodes(fn func(meta.ObjectInfo) error) error {
	return t.objectInfos("list nodes", qNodeInfos, fn)
}

// InlineBodies implements meta.Tx.
func (t *Tx) InlineBodies(fn func(meta.ObjectInfo) error) error {
	return t.objectInfos("list inline bodies", qInlineInfos, fn)
}

func (t *Tx) objectInfos(op, query string, fn func(meta.ObjectInfo) error) error {
	return t.query(op, query, nil, func(rows *sql.Rows) error {
		var (
			o  meta.ObjectInfo
			h  []byte
			ns int64
		)
		if err := rows.Scan(&h, &o.Size, &ns); err != nil {
			return err
		}
		var err error
		if o.Hash, err = scanHash(h); err != nil {
			return err
		}
		o.TouchedAt = fromNanos(ns)
		return fn(o)
	})
}

// DeleteNodes implements meta.Tx.
func (t *Tx) DeleteNodes(hashes []cas.Hash, touchedBefore time.Time) (int, error) {
	return t.deleteObjects("delete nodes", qDeleteNode, hashes, touchedBefore)
}

// DeleteInline implements meta.Tx.
func (t *Tx) DeleteInline(hashes []cas.Hash, touchedBefore time.Time) (int, error) {
	return t.deleteObjects("delete inline bodies", qDeleteInline, hashes, touchedBefore)
}

func (t *Tx) deleteObjects(op, query string, hashes []cas.Hash, before time.Time) (int, error) {
	deleted := 0
	for _, h := range hashes {
		res, err := t.exec(op, query, h[:], before.UnixNano())
		if err != nil {
			return deleted, err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return deleted, fmt.Errorf("%s: %w", op, err)
		}
		deleted += int(n)
	}
	return deleted, nil
}

// Condemn implements meta.Tx.
func (t *Tx) Condemn(hashes []cas.Hash) error {
	for _, h := range hashes {
		if _, err := t.exec("condemn blobs", qCondemn, h[:]); err != nil {
			return err
		}
	}
	return nil
}

// MarkDeleting implements meta.Tx.
func (t *Tx) MarkDeleting(since time.Time) ([]cas.Hash, error) {
	const op = "mark condemned blobs deleting"
	if _, err := t.exec(op, qReprieve, since.UnixNano()); err != nil {
		return nil, err
	}
	if _, err := t.exec(op, qMarkDeleting); err != nil {
		return nil, err
	}
	var out []cas.Hash
	err := t.query(op, qDeleting, nil, func(rows *sql.Rows) error {
		var h []byte
		if err := rows.Scan(&h); err != nil {
			return err
		}
		hash, err := scanHash(h)
		out = append(out, hash)
		return err
	})
	return out, err
}

// Condemned implements meta.Tx.
func (t *Tx) Condemned() ([]meta.Condemned, error) {
	var out []meta.Condemned
	err := t.query("list condemned blobs", qCondemned, nil, func(rows *sql.Rows) error {
		var (
			h     []byte
			state string
		)
		if err := rows.Scan(&h, &state); err != nil {
			return err
		}
		hash, err := scanHash(h)
		out = append(out, meta.Condemned{Hash: hash, Deleting: state == "deleting"})
		return err
	})
	return out, err
}

// Uncondemn implements meta.Tx.
func (t *Tx) Uncondemn(hashes []cas.Hash) error {
	for _, h := range hashes {
		if _, err := t.exec("uncondemn blobs", qUncondemn, h[:]); err != nil {
			return err
		}
	}
	return nil
}

// scanHash converts a stored hash; a wrong length is errdefs.ErrCorrupt.
func scanHash(b []byte) (cas.Hash, error) {
	h, err := cas.FromBytes(b)
	if err != nil {
		return h, fmt.Errorf("read hash: %w: %w", errdefs.ErrCorrupt, err)
	}
	return h, nil
}
