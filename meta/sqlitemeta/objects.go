package sqlitemeta

import "github.com/forkspace/forkspace/meta"

// Nodes and inline bodies are immutable and content-addressed: a put of an
// existing hash is a no-op and keeps the first created_at.
const (
	qGetNode   = `SELECT data FROM nodes WHERE hash = $1`
	qGetInline = `SELECT data FROM inline_bodies WHERE hash = $1`
)

var (
	putNodes  = newMultiRow(`INSERT INTO nodes (hash, data, created_at) VALUES `, `(?, ?, `+nowFunc+`())`, ` ON CONFLICT (hash) DO NOTHING`)
	putInline = newMultiRow(`INSERT INTO inline_bodies (hash, data, created_at) VALUES `, `(?, ?, `+nowFunc+`())`, ` ON CONFLICT (hash) DO NOTHING`)
)

// PutNodes implements meta.Tx.
func (t *tx) PutNodes(nodes []meta.Object) error { return t.putObjects("put nodes", putNodes, nodes) }

// PutInline implements meta.Tx.
func (t *tx) PutInline(bodies []meta.Object) error {
	return t.putObjects("put inline bodies", putInline, bodies)
}

func (t *tx) putObjects(op string, m *multiRow, objs []meta.Object) error {
	return t.insert(op, m, len(objs), func(i int, dst []any) {
		data := objs[i].Data
		if data == nil {
			data = []byte{}
		}
		dst[0], dst[1] = objs[i].Hash[:], data
	})
}
