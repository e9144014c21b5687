package sqltx

import (
	"database/sql"
	"fmt"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/meta"
)

// The pack index (migration 0014 of sqlitemeta, 0004 of pgmeta): packs and
// pack_entries.
const (
	qAddPack    = `INSERT INTO packs (id, size, state, created_at) VALUES ($1, $2, 'uploading', ` + nowFunc + `())`
	qPackLive   = `UPDATE packs SET state = 'live' WHERE id = $1 AND state = 'uploading'`
	qIndexEntry = `INSERT INTO pack_entries (hash, pack, pos, size, created_at) VALUES ($1, $2, $3, $4, ` + nowFunc + `()) ON CONFLICT (hash) DO NOTHING`
	qPackEntry  = `SELECT hash, pack, pos, size, created_at FROM pack_entries WHERE hash = $1`
	qAllEntries = `SELECT hash, pack, pos, size, created_at FROM pack_entries`
	qEntriesOf  = `SELECT hash, pack, pos, size, created_at FROM pack_entries WHERE pack = $1`
	qDropEntry  = `DELETE FROM pack_entries WHERE hash = $1`
	qMoveEntry  = `UPDATE pack_entries SET pack = $1, pos = $2 WHERE hash = $3 AND pack = $4`
	qPacks      = `SELECT p.id, p.size, p.state, p.created_at, p.retired_at, COUNT(e.hash), COALESCE(SUM(e.size), 0)
		FROM packs p LEFT JOIN pack_entries e ON e.pack = p.id
		GROUP BY p.id, p.size, p.state, p.created_at, p.retired_at`
	qPackState = `SELECT state FROM packs WHERE id = $1`
	qRetire    = `UPDATE packs SET state = 'retired', retired_at = ` + nowFunc + `()
		WHERE id = $1 AND state <> 'retired' AND NOT EXISTS (SELECT 1 FROM pack_entries WHERE pack = $1)`
	qDeletePack = `DELETE FROM packs WHERE id = $1 AND state = 'retired'`
)

// indexEntries inserts a pack's entries, many per statement (a pack holds
// hundreds: one round trip each would cost PostgreSQL tens of
// milliseconds per pack).
var indexEntries = newMultiRow(`INSERT INTO pack_entries (hash, pack, pos, size, created_at) VALUES `,
	`(?, ?, ?, ?, `+nowFunc+`())`, ` ON CONFLICT (hash) DO NOTHING`)

// AddPack implements meta.Tx.
func (t *Tx) AddPack(id cas.Hash, size int64) error {
	_, err := t.exec("record pack "+id.Short(), qAddPack, id[:], size)
	return err
}

// IndexPack implements meta.Tx.
func (t *Tx) IndexPack(id cas.Hash, entries []meta.PackEntry) error {
	op := "index pack " + id.Short()
	if err := t.execOne(op, qPackLive, id[:]); err != nil {
		return err
	}
	return t.insert(op, indexEntries, len(entries), func(i int, dst []any) {
		e := entries[i]
		dst[0], dst[1], dst[2], dst[3] = e.Hash[:], id[:], e.Offset, e.Size
	})
}

// PackEntry implements meta.Tx.
func (t *Tx) PackEntry(h cas.Hash) (meta.PackEntry, error) {
	var (
		e     meta.PackEntry
		found bool
	)
	err := t.query("find packed blob "+h.Short(), qPackEntry, []any{h[:]}, func(rows *sql.Rows) error {
		var err error
		e, err = scanEntry(rows)
		found = true
		return err
	})
	if err == nil && !found {
		err = fmt.Errorf("find packed blob %s: %w", h.Short(), errNoRow)
	}
	return e, err
}

// PackEntries implements meta.Tx.
func (t *Tx) PackEntries(pack cas.Hash, fn func(meta.PackEntry) error) error {
	q, args := qAllEntries, []any(nil)
	if !pack.IsZero() {
		q, args = qEntriesOf, []any{pack[:]}
	}
	return t.query("list packed blobs", q, args, func(rows *sql.Rows) error {
		e, err := scanEntry(rows)
		if err != nil {
			return err
		}
		return fn(e)
	})
}

func scanEntry(rows *sql.Rows) (meta.PackEntry, error) {
	var (
		e       meta.PackEntry
		h, p    []byte
		created int64
	)
	if err := rows.Scan(&h, &p, &e.Offset, &e.Size, &created); err != nil {
		return e, err
	}
	var err error
	if e.Hash, err = scanHash(h); err != nil {
		return e, err
	}
	if e.Pack, err = scanHash(p); err != nil {
		return e, err
	}
	e.CreatedAt = fromNanos(created)
	return e, nil
}

// DropPackEntries implements meta.Tx.
func (t *Tx) DropPackEntries(hashes []cas.Hash) error {
	for _, h := range hashes {
		if _, err := t.exec("drop packed blobs", qDropEntry, h[:]); err != nil {
			return err
		}
	}
	return nil
}

// MovePackEntries implements meta.Tx.
func (t *Tx) MovePackEntries(from cas.Hash, entries []meta.PackEntry) (int, error) {
	op := "move packed blobs from " + from.Short()
	moved := 0
	for _, e := range entries {
		res, err := t.exec(op, qMoveEntry, e.Pack[:], e.Offset, e.Hash[:], from[:])
		if err != nil {
			return moved, err
		}
		n, err := res.RowsAffected()
		if err != nil {
			return moved, fmt.Errorf("%s: %w", op, err)
		}
		moved += int(n)
	}
	return moved, nil
}

// Packs implements meta.Tx.
func (t *Tx) Packs(fn func(meta.Pack) error) error {
	return t.query("list packs", qPacks, nil, func(rows *sql.Rows) error {
		var (
			p       meta.Pack
			id      []byte
			created int64
			retired sql.NullInt64
		)
		if err := rows.Scan(&id, &p.Size, &p.State, &created, &retired, &p.LiveBlobs, &p.LiveBytes); err != nil {
			return err
		}
		var err error
		if p.ID, err = scanHash(id); err != nil {
			return err
		}
		p.CreatedAt = fromNanos(created)
		if retired.Valid {
			p.RetiredAt = fromNanos(retired.Int64)
		}
		return fn(p)
	})
}

// RetirePack implements meta.Tx.
func (t *Tx) RetirePack(id cas.Hash) (bool, error) {
	op := "retire pack " + id.Short()
	if _, err := t.exec(op, qRetire, id[:]); err != nil {
		return false, err
	}
	var state string
	if err := t.queryRow(op, false, qPackState, []any{id[:]}, &state); err != nil {
		return false, err
	}
	return state == meta.PackRetired, nil
}

// DeletePack implements meta.Tx.
func (t *Tx) DeletePack(id cas.Hash) error {
	_, err := t.exec("delete pack "+id.Short(), qDeletePack, id[:])
	return err
}
