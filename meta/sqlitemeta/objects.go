package sqlitemeta

import (
	"fmt"

	"github.com/forkspace/forkspace/meta"
)

// Nodes and inline bodies are immutable and content-addressed: a put of an
// existing hash is a no-op and keeps the first created_at.
const (
	qGetNode   = `SELECT data FROM nodes WHERE hash = $1`
	qPutNode   = `INSERT INTO nodes (hash, data, created_at) VALUES ($1, $2, ` + nowFunc + `()) ON CONFLICT (hash) DO NOTHING`
	qGetInline = `SELECT data FROM inline_bodies WHERE hash = $1`
	qPutInline = `INSERT INTO inline_bodies (hash, data, created_at) VALUES ($1, $2, ` + nowFunc + `()) ON CONFLICT (hash) DO NOTHING`
)

// PutNodes implements meta.Tx.
func (t *tx) PutNodes(nodes []meta.Object) error { return t.putObjects("put node", qPutNode, nodes) }

// PutInline implements meta.Tx.
func (t *tx) PutInline(bodies []meta.Object) error {
	return t.putObjects("put inline body", qPutInline, bodies)
}

func (t *tx) putObjects(op, query string, objs []meta.Object) error {
	for _, o := range objs {
		data := o.Data
		if data == nil {
			data = []byte{}
		}
		if _, err := t.exec(op, query, o.Hash[:], data); err != nil {
			return fmt.Errorf("object %s: %w", o.Hash.Short(), err)
		}
	}
	return nil
}
