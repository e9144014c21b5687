package memmeta

import (
	"fmt"
	"io/fs"
	"maps"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/meta"
)

// ownPacks makes the pack tables private to the Update.
func (t *tx) ownPacks(op string) error {
	return t.write(op, "packs", func() {
		t.s.packs = maps.Clone(t.s.packs)
		t.s.packEntries = maps.Clone(t.s.packEntries)
	})
}

// AddPack implements meta.Tx.
func (t *tx) AddPack(id cas.Hash, size int64) error {
	op := "record pack " + id.Short()
	if err := t.ownPacks(op); err != nil {
		return err
	}
	if _, ok := t.s.packs[id]; ok {
		return fmt.Errorf("%s: %w", op, fs.ErrExist)
	}
	t.s.packs[id] = meta.Pack{ID: id, Size: size, State: meta.PackUploading, CreatedAt: t.store.now()}
	return nil
}

// IndexPack implements meta.Tx.
func (t *tx) IndexPack(id cas.Hash, entries []meta.PackEntry) error {
	op := "index pack " + id.Short()
	if err := t.ownPacks(op); err != nil {
		return err
	}
	p, ok := t.s.packs[id]
	if !ok || p.State != meta.PackUploading {
		return notExist(op)
	}
	p.State = meta.PackLive
	t.s.packs[id] = p
	now := t.store.now()
	for _, e := range entries {
		if _, ok := t.s.packEntries[e.Hash]; !ok {
			t.s.packEntries[e.Hash] = meta.PackEntry{Hash: e.Hash, Pack: id, Offset: e.Offset, Size: e.Size, CreatedAt: now}
		}
	}
	return nil
}

// PackEntry implements meta.Tx.
func (t *tx) PackEntry(h cas.Hash) (meta.PackEntry, error) {
	e, ok := t.s.packEntries[h]
	if !ok {
		return e, notExist("find packed blob " + h.Short())
	}
	return e, nil
}

// PackEntries implements meta.Tx.
func (t *tx) PackEntries(pack cas.Hash, fn func(meta.PackEntry) error) error {
	for _, e := range t.s.packEntries {
		if !pack.IsZero() && e.Pack != pack {
			continue
		}
		if err := fn(e); err != nil {
			return err
		}
	}
	return nil
}

// DropPackEntries implements meta.Tx.
func (t *tx) DropPackEntries(hashes []cas.Hash) error {
	if err := t.ownPacks("drop packed blobs"); err != nil {
		return err
	}
	for _, h := range hashes {
		delete(t.s.packEntries, h)
	}
	return nil
}

// MovePackEntries implements meta.Tx.
func (t *tx) MovePackEntries(from cas.Hash, entries []meta.PackEntry) (int, error) {
	if err := t.ownPacks("move packed blobs from " + from.Short()); err != nil {
		return 0, err
	}
	moved := 0
	for _, e := range entries {
		cur, ok := t.s.packEntries[e.Hash]
		if !ok || cur.Pack != from {
			continue
		}
		cur.Pack, cur.Offset = e.Pack, e.Offset
		t.s.packEntries[e.Hash] = cur
		moved++
	}
	return moved, nil
}

// Packs implements meta.Tx.
func (t *tx) Packs(fn func(meta.Pack) error) error {
	live := map[cas.Hash]meta.Pack{}
	for _, e := range t.s.packEntries {
		p := live[e.Pack]
		p.LiveBlobs++
		p.LiveBytes += e.Size
		live[e.Pack] = p
	}
	for id, p := range t.s.packs {
		p.LiveBlobs, p.LiveBytes = live[id].LiveBlobs, live[id].LiveBytes
		if err := fn(p); err != nil {
			return err
		}
	}
	return nil
}

// RetirePack implements meta.Tx.
func (t *tx) RetirePack(id cas.Hash) (bool, error) {
	op := "retire pack " + id.Short()
	if err := t.ownPacks(op); err != nil {
		return false, err
	}
	p, ok := t.s.packs[id]
	if !ok {
		return false, notExist(op)
	}
	if p.State == meta.PackRetired {
		return true, nil
	}
	for _, e := range t.s.packEntries {
		if e.Pack == id {
			return false, nil
		}
	}
	p.State, p.RetiredAt = meta.PackRetired, t.store.now()
	t.s.packs[id] = p
	return true, nil
}

// DeletePack implements meta.Tx.
func (t *tx) DeletePack(id cas.Hash) error {
	if err := t.ownPacks("delete pack " + id.Short()); err != nil {
		return err
	}
	if p, ok := t.s.packs[id]; ok && p.State == meta.PackRetired {
		delete(t.s.packs, id)
	}
	return nil
}
