package memmeta

import (
	"fmt"
	"maps"
	"slices"
	"time"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/meta"
)

// ownIntents makes the intents table private to the Update.
func (t *tx) ownIntents(op string) error {
	return t.write(op, "intents", func() { t.s.intents = slices.Clone(t.s.intents) })
}

// ownCondemned makes the condemned table private to the Update.
func (t *tx) ownCondemned(op string) error {
	return t.write(op, "condemned", func() { t.s.condemned = maps.Clone(t.s.condemned) })
}

// AddIntents implements meta.Tx.
func (t *tx) AddIntents(hashes []cas.Hash) (int64, error) {
	const op = "add upload intents"
	if err := t.ownIntents(op); err != nil {
		return 0, err
	}
	for _, h := range hashes {
		if t.s.condemned[h] {
			return 0, fmt.Errorf("%s: blob %s: %w: being deleted by the collector", op, h.Short(), errdefs.ErrBusy)
		}
	}
	id, err := t.Allocate("upload_intent", 1)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", op, err)
	}
	now := t.store.now()
	seen := map[cas.Hash]bool{}
	for _, h := range hashes {
		if !seen[h] {
			seen[h] = true
			t.s.intents = append(t.s.intents, meta.Intent{ID: id, Hash: h, CreatedAt: now})
		}
	}
	return id, nil
}

// ReleaseIntents implements meta.Tx.
func (t *tx) ReleaseIntents(ids []int64) error {
	if err := t.ownIntents("release upload intents"); err != nil {
		return err
	}
	for i := range t.s.intents {
		if slices.Contains(ids, t.s.intents[i].ID) {
			t.s.intents[i].Released = true
		}
	}
	return nil
}

// Intents implements meta.Tx.
func (t *tx) Intents(fn func(meta.Intent) error) error {
	for _, in := range t.s.intents {
		if err := fn(in); err != nil {
			return err
		}
	}
	return nil
}

// ForgetIntents implements meta.Tx.
func (t *tx) ForgetIntents(released, pending time.Time) error {
	if err := t.ownIntents("forget upload intents"); err != nil {
		return err
	}
	t.s.intents = slices.DeleteFunc(t.s.intents, func(in meta.Intent) bool {
		if in.Released {
			return in.CreatedAt.Before(released)
		}
		return in.CreatedAt.Before(pending)
	})
	return nil
}

// Nodes implements meta.Tx.
func (t *tx) Nodes(fn func(meta.ObjectInfo) error) error { return objectInfos(t.s.nodes, fn) }

// InlineBodies implements meta.Tx.
func (t *tx) InlineBodies(fn func(meta.ObjectInfo) error) error { return objectInfos(t.s.inline, fn) }

func objectInfos(table map[cas.Hash]object, fn func(meta.ObjectInfo) error) error {
	for h, o := range table {
		if err := fn(meta.ObjectInfo{Hash: h, Size: int64(len(o.data)), TouchedAt: o.touched}); err != nil {
			return err
		}
	}
	return nil
}

// DeleteNodes implements meta.Tx.
func (t *tx) DeleteNodes(hashes []cas.Hash, touchedBefore time.Time) (int, error) {
	if err := t.write("delete nodes", "nodes", func() { t.s.nodes = maps.Clone(t.s.nodes) }); err != nil {
		return 0, err
	}
	return deleteObjects(t.s.nodes, hashes, touchedBefore), nil
}

// DeleteInline implements meta.Tx.
func (t *tx) DeleteInline(hashes []cas.Hash, touchedBefore time.Time) (int, error) {
	if err := t.write("delete inline bodies", "inline", func() { t.s.inline = maps.Clone(t.s.inline) }); err != nil {
		return 0, err
	}
	return deleteObjects(t.s.inline, hashes, touchedBefore), nil
}

func deleteObjects(table map[cas.Hash]object, hashes []cas.Hash, before time.Time) int {
	n := 0
	for _, h := range hashes {
		if o, ok := table[h]; ok && o.touched.Before(before) {
			delete(table, h)
			n++
		}
	}
	return n
}

// Condemn implements meta.Tx.
func (t *tx) Condemn(hashes []cas.Hash) error {
	if err := t.ownCondemned("condemn blobs"); err != nil {
		return err
	}
	for _, h := range hashes {
		if _, ok := t.s.condemned[h]; !ok {
			t.s.condemned[h] = false
		}
	}
	return nil
}

// MarkDeleting implements meta.Tx.
func (t *tx) MarkDeleting(since time.Time) ([]cas.Hash, error) {
	if err := t.ownCondemned("mark condemned blobs deleting"); err != nil {
		return nil, err
	}
	for _, in := range t.s.intents {
		if deleting, ok := t.s.condemned[in.Hash]; ok && !deleting && (!in.Released || !in.CreatedAt.Before(since)) {
			delete(t.s.condemned, in.Hash)
		}
	}
	out := make([]cas.Hash, 0, len(t.s.condemned))
	for h := range t.s.condemned {
		t.s.condemned[h] = true
		out = append(out, h)
	}
	return out, nil
}

// Condemned implements meta.Tx.
func (t *tx) Condemned() ([]meta.Condemned, error) {
	out := make([]meta.Condemned, 0, len(t.s.condemned))
	for h, deleting := range t.s.condemned {
		out = append(out, meta.Condemned{Hash: h, Deleting: deleting})
	}
	return out, nil
}

// Uncondemn implements meta.Tx.
func (t *tx) Uncondemn(hashes []cas.Hash) error {
	if err := t.ownCondemned("uncondemn blobs"); err != nil {
		return err
	}
	for _, h := range hashes {
		delete(t.s.condemned, h)
	}
	return nil
}
