package vfs

import (
	"io/fs"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/kv"
	"github.com/forkspace/forkspace/meta"
)

// Durable is a live FS's durable state as Hold found it: its tree root,
// its staging overlay (a copy-on-write clone, so later changes on either
// side never show in the other) and the highest staging seq it used. A
// workspace whose stored state is a copy of it (a fork) opens from it
// (Options.From) without reading and decoding its staging rows
// (docs/decisions/028).
type Durable struct {
	root    cas.Hash
	ov      *kv.Overlay
	seq     int64
	headGen int64
}

// Mirrors reports whether ws, the workspace's row as a transaction reads
// it, is the state d mirrors: same root and head generation. Another
// process sharing the store may have changed the workspace (the head
// generation then differs); a state that does not mirror the row must not
// stand for its staging rows.
func (d *Durable) Mirrors(ws *meta.Workspace) bool {
	return ws.Root == d.root && ws.HeadGen == d.headGen
}

// Hold runs fn while f's durable state holds still and gives it that
// state: no mutation commits, and no fold or reset runs, until fn returns
// (mutations wait), so a metadata transaction fn runs reads the
// workspace's stored state as d holds it, unless another process changed
// it (see Durable.Mirrors). fn should be short: one transaction.
func (f *FS) Hold(fn func(d *Durable) error) error {
	if f.readOnly {
		return &fs.PathError{Op: "hold", Path: ".", Err: errdefs.ErrReadOnly}
	}
	if f.closed.Load() {
		return &fs.PathError{Op: "hold", Path: ".", Err: fs.ErrClosed}
	}
	f.foldMu.Lock()
	defer f.foldMu.Unlock()
	f.lockIdle()
	defer f.wmu.Unlock()
	f.mu.Lock() // Clone writes to the tree it clones
	d := &Durable{root: f.root, ov: f.ov.Clone(), seq: f.seq, headGen: f.headGen.Load()}
	f.mu.Unlock()
	return fn(d)
}
