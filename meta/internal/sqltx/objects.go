package sqltx

import (
	"slices"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/meta"
)

// Nodes and inline bodies are immutable and content-addressed: a put of an
// existing hash keeps its bytes and first created_at and refreshes
// touched_at (see GCTx).
const (
	QGetNode   = `SELECT data FROM nodes WHERE hash = $1`
	QGetInline = `SELECT data FROM inline_bodies WHERE hash = $1`
)

var (
	putNodes = newMultiRow(`INSERT INTO nodes (hash, data, created_at, touched_at) VALUES `,
		`(?, ?, `+nowFunc+`(), `+nowFunc+`())`, ` ON CONFLICT (hash) DO UPDATE SET touched_at = excluded.touched_at`)
	// A put of a body stored before checksums (crc NULL) fills its crc in:
	// the same hash is the same bytes.
	putInline = newMultiRow(`INSERT INTO inline_bodies (hash, data, crc, created_at, touched_at) VALUES `,
		`(?, ?, ?, `+nowFunc+`(), `+nowFunc+`())`,
		` ON CONFLICT (hash) DO UPDATE SET touched_at = excluded.touched_at, crc = COALESCE(inline_bodies.crc, excluded.crc)`)
)

// PutNodes implements meta.Tx.
func (t *Tx) PutNodes(nodes []meta.Object) error {
	return t.putObjects("put nodes", putNodes, nodes, false)
}

// PutInline implements meta.Tx: each body with its checksum (InlineSum).
func (t *Tx) PutInline(bodies []meta.Object) error {
	return t.putObjects("put inline bodies", putInline, bodies, true)
}

// putObjects inserts objs, each hash once: one multi-row INSERT … ON
// CONFLICT DO UPDATE may not name a row twice on PostgreSQL (SQLSTATE
// 21000), and a group commit can carry one body from two mutations. With
// sum, m's third parameter is each object's checksum.
func (t *Tx) putObjects(op string, m *multiRow, objs []meta.Object, sum bool) error {
	objs = uniqueObjects(objs)
	return t.insert(op, m, len(objs), func(i int, dst []any) {
		data := objs[i].Data
		if data == nil {
			data = []byte{}
		}
		dst[0], dst[1] = objs[i].Hash[:], data
		if sum {
			dst[2] = InlineSum(data)
		}
	})
}

// uniqueObjects returns objs without repeated hashes (objs itself when
// none repeats: the common case allocates nothing beyond the check).
func uniqueObjects(objs []meta.Object) []meta.Object {
	if len(objs) < 2 {
		return objs
	}
	seen := make(map[cas.Hash]bool, len(objs))
	for i, o := range objs {
		if !seen[o.Hash] {
			seen[o.Hash] = true
			continue
		}
		out := slices.Clone(objs[:i])
		for _, o := range objs[i+1:] {
			if !seen[o.Hash] {
				seen[o.Hash] = true
				out = append(out, o)
			}
		}
		return out
	}
	return objs
}
