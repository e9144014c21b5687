package vfs

import (
	"context"
	"fmt"
	"io/fs"

	"github.com/forkspace/forkspace/errdefs"
)

// A workspace of a store several processes share (Options.Shared,
// docs/decisions/023). Each process mirrors the head in memory, as a
// store's only process does; every commit that changes the state
// advances the head generation from the one the mirror reflects, so a
// process whose mirror is out of date commits nothing, reloads the head
// (reloadLocked) and computes the mutation again (mutate). Reads are
// served from the mirror: a process hears of other processes' commits
// by notification (Notice) or asks the database (CatchUp).

// HeadGen returns the head generation the durable state mirrors.
func (f *FS) HeadGen() int64 { return f.headGen.Load() }

// Notice tells f that another process moved the head to generation gen:
// f reloads unless it mirrors that generation or a later one already.
// It is CatchUp without the read of the generation.
func (f *FS) Notice(ctx context.Context, gen int64) error {
	if !f.shared || f.readOnly || gen <= f.headGen.Load() {
		return nil
	}
	return f.CatchUp(ctx)
}

// CatchUp reads the workspace's head generation and reloads the head
// when another process moved it, so that what f serves afterwards
// includes every change committed before the call, by any process. It
// waits for f's own commits in flight. On a workspace not shared it
// does nothing. A deleted workspace is fs.ErrNotExist.
func (f *FS) CatchUp(ctx context.Context) error {
	if !f.shared || f.readOnly {
		return nil
	}
	if f.closed.Load() {
		return &fs.PathError{Op: "catch up", Path: ".", Err: fs.ErrClosed}
	}
	f.lockIdle()
	reloaded, err := f.reloadLocked(ctx)
	f.wmu.Unlock()
	if reloaded {
		f.notifyReload(ctx)
	}
	return errdefs.PathError("catch up", ".", err)
}

// notifyReload tells the watchers that other processes changed the
// workspace, on a goroutine of its own: the reload may happen inside a
// FUSE request (a commit that lost), and a mount's watcher invalidating
// the kernel's caches from inside one could wait for the kernel, which
// waits for the request.
func (f *FS) notifyReload(ctx context.Context) {
	go f.notify(context.WithoutCancel(ctx), Event{Op: "reload", Name: ".", Tree: true, Remote: true})
}

// reloadIfMoved reloads the head if another process moved it and reports
// whether it did.
func (f *FS) reloadIfMoved(ctx context.Context) bool {
	before := f.reloads.Load()
	return f.CatchUp(ctx) == nil && f.reloads.Load() != before
}

// reloadLocked replaces the mirror by the head as committed, unless it
// mirrors that generation already, and reports whether it did; the
// caller holds wmu and no commit is in flight, or is the failing
// commit's leader (abandon), and tells the watchers (notifyReload) once
// it released wmu.
func (f *FS) reloadLocked(ctx context.Context) (bool, error) {
	root, rows, gen, err := readHead(ctx, f.d.Meta, f.ws, f.headGen.Load())
	if err != nil {
		return false, fmt.Errorf("reload workspace %s: %w", f.ws, err)
	}
	if gen == f.headGen.Load() {
		f.mu.RLock()
		f.wov = f.ov.Clone()
		f.mu.RUnlock()
		return false, nil
	}
	ov, seq := overlayOf(rows)
	f.mu.Lock()
	f.root, f.ov, f.seq, f.sinceFold = root, ov, max(f.seq, seq), 0
	f.wov = ov.Clone()
	f.headGen.Store(gen)
	f.reloads.Add(1)
	f.gen.Add(1)
	f.mu.Unlock()
	return true, nil
}
