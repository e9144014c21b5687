package vfs

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/content"
	"github.com/forkspace/forkspace/meta"
)

// Group commit. A mutation is computed under wmu against wov (the durable
// overlay plus every mutation not yet durable), applied to wov, and queued.
// The first queued mutation's goroutine becomes the leader: it commits
// everything queued in one metadata transaction, applies it to the overlay
// readers use, wakes the waiters, and repeats until the queue is empty.
// Batches commit in queue order, so a mutation is never durable without
// those it was computed on. When a batch fails, it and everything queued
// after it fail (they were computed on it) and wov is rebuilt from the
// durable overlay.

// commitReq is one mutation waiting to be durable.
type commitReq struct {
	rows    []meta.Staged
	inline  []meta.Object
	intents content.Intents
	// also are metadata writes that commit with the rows (FS.AlsoCommit),
	// hooks those that run once the rows are written (WithCommit).
	also  []func(meta.Tx) error
	hooks []*commitHook
	// deferred: the mutation's caller did not wait for it
	// (WithDeferredCommit); changed reports it once durable.
	deferred bool
	changed  func()
	err      error
	done     chan struct{}
}

// committer is the queue of mutations waiting for a transaction.
type committer struct {
	mu      sync.Mutex
	queue   []*commitReq
	leading bool       // a goroutine is committing batches
	drained *sync.Cond // signalled when the queue empties and no one leads
	// lastDeferred is the last deferred request queued and not yet done;
	// armed says a timer will settle it.
	lastDeferred *commitReq
	armed        bool
}

// enqueue adds req and reports whether the caller must lead.
func (c *committer) enqueue(req *commitReq) (lead bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.queue = append(c.queue, req)
	if c.leading {
		return false
	}
	c.leading = true
	return true
}

// next takes the queued batch, or ends the leadership when there is none.
func (c *committer) next() []*commitReq {
	c.mu.Lock()
	defer c.mu.Unlock()
	batch := c.queue
	c.queue = nil
	if len(batch) == 0 {
		c.leading = false
		c.drained.Broadcast()
	}
	return batch
}

// idle reports whether nothing is queued or in flight.
func (c *committer) idle() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.leading && len(c.queue) == 0
}

// wait blocks until nothing is queued or in flight. The caller must not
// hold wmu (a failing batch needs it).
func (c *committer) wait() {
	c.mu.Lock()
	for c.leading || len(c.queue) > 0 {
		c.drained.Wait()
	}
	c.mu.Unlock()
}

// lockIdle takes wmu once no mutation is queued or in flight; as writers
// queue under wmu, none can start until the caller releases it.
func (f *FS) lockIdle() {
	for {
		f.wmu.Lock()
		if f.commits.idle() {
			return
		}
		f.wmu.Unlock()
		_ = f.settle() // deferred mutations may be queued with no leader
		f.commits.wait()
	}
}

// stage numbers t's mutations, applies them to wov and returns the request
// to commit. The caller holds wmu.
func (f *FS) stage(t *txn) *commitReq {
	req := &commitReq{rows: make([]meta.Staged, len(t.muts)), inline: t.inline, intents: t.intents, also: t.also, hooks: t.hooks, done: make(chan struct{})}
	for i, m := range t.muts {
		f.seq++
		req.rows[i] = meta.Staged{Key: m.Key, Value: m.Value, Deleted: m.Delete, Seq: f.seq}
		if m.Delete {
			f.wov.Delete(m.Key, f.seq)
		} else {
			f.wov.Set(m.Key, m.Value, f.seq)
		}
	}
	return req
}

// lead commits queued batches until the queue is empty. The batch's
// transaction does not inherit ctx's cancellation: other callers' mutations
// ride in it.
func (f *FS) lead(ctx context.Context) {
	ctx = context.WithoutCancel(ctx)
	for {
		batch := f.commits.next()
		if len(batch) == 0 {
			return
		}
		err := f.commitBatch(ctx, batch)
		if err != nil {
			f.abandon(batch, err)
			continue
		}
		f.mu.Lock()
		for _, req := range batch {
			f.sinceFold += len(req.rows)
			for _, r := range req.rows {
				if r.Deleted {
					f.ov.Delete(r.Key, r.Seq)
				} else {
					f.ov.Set(r.Key, r.Value, r.Seq)
				}
			}
		}
		f.gen.Add(1)
		f.mu.Unlock()
		// The hooks hear of their commit in queue order, the order
		// their work ran in the transaction.
		for _, req := range batch {
			for _, h := range req.hooks {
				h.done()
			}
			if req.changed != nil {
				req.changed()
			}
		}
		f.finish(batch, nil)
	}
}

// finish closes the requests of a batch with err and forgets the last
// deferred one if it is among them.
func (f *FS) finish(batch []*commitReq, err error) {
	for _, req := range batch {
		if req.deferred {
			f.deferred.Add(-1)
			if err != nil {
				f.log.Warn("deferred mutation failed", "err", err)
			}
		}
	}
	f.commits.mu.Lock()
	for _, req := range batch {
		if req == f.commits.lastDeferred {
			f.commits.lastDeferred = nil
		}
		if req.err == nil {
			req.err = err
		}
		close(req.done)
	}
	f.commits.mu.Unlock()
}

// commitBatch writes a batch's inline bodies, intent releases and staging
// rows in one transaction.
func (f *FS) commitBatch(ctx context.Context, batch []*commitReq) error {
	var w commitWork
	for _, req := range batch {
		w.rows = append(w.rows, req.rows...)
		w.inline = append(w.inline, req.inline...)
		w.intents = append(w.intents, req.intents...)
		w.also = append(w.also, req.also...)
		for _, h := range req.hooks {
			w.after = append(w.after, h.fn)
		}
	}
	return f.write(ctx, &w)
}

// commitWork is what one commit writes: inline bodies, upload intents to
// release, metadata writes that ride along (FS.AlsoCommit), staging rows
// or a folded root (a Batch that folded ahead), and the WithCommit work
// that runs once those are written.
type commitWork struct {
	rows    []meta.Staged
	inline  []meta.Object
	intents content.Intents
	also    []func(meta.Tx) error
	fold    *foldedTo
	after   []func(meta.Tx) error
}

// foldedTo is a new head for the workspace: root, the tree nodes it needs
// that are not stored yet, and the seq up to which staging rows are folded
// into it.
type foldedTo struct {
	root  cas.Hash
	nodes []meta.Object
	upTo  int64
}

// write commits w in one metadata transaction, once the chunks it names
// are durable.
func (f *FS) write(ctx context.Context, w *commitWork) error {
	// The chunks the batch references must be durable before metadata
	// naming them can be: their puts did not wait for the disk, so the
	// whole batch waits for it once here (docs/decisions/021).
	if len(w.intents) > 0 {
		if err := f.d.Content.Sync(ctx); err != nil {
			return fmt.Errorf("commit mutation: %w", err)
		}
	}
	gen := f.headGen.Load()
	err := f.d.Meta.Update(ctx, func(tx meta.Tx) error {
		if f.shared {
			if err := tx.AdvanceHead(f.ws, gen); err != nil {
				return err
			}
		}
		if len(w.inline) > 0 {
			if err := tx.PutInline(w.inline); err != nil {
				return err
			}
		}
		if len(w.intents) > 0 {
			if err := tx.ReleaseIntents(w.intents); err != nil {
				return err
			}
		}
		for _, fn := range w.also {
			if err := fn(tx); err != nil {
				return err
			}
		}
		if err := w.stage(tx, f.ws); err != nil {
			return err
		}
		for _, fn := range w.after {
			if err := fn(tx); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("commit mutation: %w", err)
	}
	if f.shared {
		f.headGen.Store(gen + 1)
	}
	return nil
}

// stage writes w's staging rows, or points workspace ws at w's folded root
// and drops the rows folded into it.
func (w *commitWork) stage(tx meta.Tx, ws string) error {
	if w.fold == nil {
		if len(w.rows) == 0 {
			return nil
		}
		return tx.PutStaged(ws, w.rows)
	}
	if len(w.fold.nodes) > 0 {
		if err := tx.PutNodes(w.fold.nodes); err != nil {
			return err
		}
	}
	if err := tx.SetRoot(ws, w.fold.root); err != nil {
		return err
	}
	return tx.DeleteStaged(ws, w.fold.upTo)
}

// abandon fails a batch that did not commit and everything queued after
// it, and rebuilds wov from the durable overlay.
func (f *FS) abandon(batch []*commitReq, err error) {
	f.wmu.Lock()
	f.commits.mu.Lock()
	rest := f.commits.queue
	f.commits.queue = nil
	f.commits.mu.Unlock()
	reloaded := false
	if errors.Is(err, meta.ErrHeadMoved) {
		// Another process changed the workspace: the callers compute
		// their mutations again on its current state.
		var rerr error
		if reloaded, rerr = f.reloadLocked(context.Background()); rerr != nil {
			err = errors.Join(err, rerr)
		}
	} else {
		f.mu.RLock()
		f.wov = f.ov.Clone()
		f.mu.RUnlock()
	}
	f.gen.Add(1) // handles may have loaded state that never became durable
	f.wmu.Unlock()
	if reloaded {
		f.notifyReload(context.Background())
	}
	f.finish(batch, err)
	f.finish(rest, fmt.Errorf("an earlier mutation failed: %w", err))
}

// commitHook is the work WithCommit adds to a mutation's transaction.
type commitHook struct {
	fn   func(meta.Tx) error
	done func()
	used atomic.Bool // carried by a mutation committing or committed
}

type commitHookKey struct{}

// WithCommit returns a context under which the next mutation an
// operation of an FS commits carries fn: fn runs in the metadata
// transaction that commits the mutation, after its rows are written (so
// fn sees the workspace's new state), and done is called once the
// mutation is durable. A failing fn fails the commit, and the operation;
// a mutation whose commit fails does not count, and the next one (a
// retry) carries fn again. Mutations committed in one group commit run
// their fns in one transaction, in queue order, and their dones are
// called in that order, on the goroutine that committed them, before any
// of those mutations' operations returns. On a Batch's filesystem the mutation carries fn into the batch's
// commit, and done waits for it (a Batch's own context carries fn the
// same way).
//
// fn runs once per transaction that carries it and may run again if that
// transaction fails: it writes only through the Tx. It suits an operation
// that commits one mutation (WriteFile, WriteFileFrom, Mkdir, Remove, a
// Batch): one that commits several (MkdirAll, RemoveAll, a handle's
// writes) carries fn on its first only, and so does one that hydrates a
// lazy file under the same context before its own mutation (Rename or
// OpenFile of a stub). An operation that changes nothing commits nothing
// and never runs fn.
func WithCommit(ctx context.Context, fn func(meta.Tx) error, done func()) context.Context {
	if done == nil {
		done = func() {}
	}
	return context.WithValue(ctx, commitHookKey{}, &commitHook{fn: fn, done: done})
}

// takeCommitHook returns the WithCommit work of ctx for a mutation about
// to commit, or nil when there is none or another mutation carries it.
func takeCommitHook(ctx context.Context) *commitHook {
	h, _ := ctx.Value(commitHookKey{}).(*commitHook)
	if h == nil || !h.used.CompareAndSwap(false, true) {
		return nil
	}
	return h
}

// dropHooks lets the WithCommit work t carried go with a failed commit:
// the next mutation (a retry) carries it again.
func (t *txn) dropHooks() {
	for _, h := range t.hooks {
		h.used.Store(false)
	}
}

// Deferred commits. A mutation made under WithDeferredCommit is computed,
// applied to wov and queued like any other, but its caller does not wait
// for the transaction: it becomes durable with the next mutation that
// commits (its leader takes the whole queue), when anything reads the FS
// (read, frozenView and everything built on them settle first, so readers
// still see only durable state, and see it whole), at Sync, Fold, Close
// and Settle, or at the latest deferDelay after it was queued. Its
// watchers hear of it once it is durable.

type deferKey struct{}

// WithDeferredCommit returns a context under which mutations return
// before they are durable: they commit with the next mutation of the FS,
// before its next read, at Sync, Fold, Settle or Close, or deferDelay
// (10 ms) later, whichever comes first; their watchers hear of them once
// they are. It suits operations on one path (OpenFile creating, Mkdir,
// Symlink, Mknod, Remove, Chmod, Chown, Chtimes): Rename and Link report their second path before
// it is durable. A handle opened under it defers only its file's
// creation, waits for it at its first commit (Sync, Flush, Close) and
// reports its failure there. A FUSE mount uses it: a program's create or
// unlink then costs no transaction of its own (the close, or the next
// unlink, carries it), and it needs durability only at close and fsync.
// A shared FS (Options.Shared), a Batch's FS and a mutation carrying
// WithCommit work commit as usual.
func WithDeferredCommit(ctx context.Context) context.Context {
	return context.WithValue(ctx, deferKey{}, true)
}

type seeKey struct{}

// SeeDeferred returns a context under which reads see the deferred
// mutations (WithDeferredCommit) at once, and the mutations in flight
// with them, instead of waiting for them to be durable: a FUSE mount's
// own requests, whose kernel already knows what the mount deferred. Its
// reads then take the FS's write lock while deferred mutations are
// queued. Other readers see only durable state. The bytes of a handle's
// deferred commit (File.Stage) may be inline bodies not yet written: read
// a file's bytes only after its writers' Flush.
func SeeDeferred(ctx context.Context) context.Context {
	return context.WithValue(ctx, seeKey{}, true)
}

// noDefer strips WithDeferredCommit from ctx.
func noDefer(ctx context.Context) context.Context {
	if d, _ := ctx.Value(deferKey{}).(bool); d {
		return context.WithValue(ctx, deferKey{}, false)
	}
	return ctx
}

// deferDelay bounds how long a deferred mutation waits for a commit to
// carry it.
const deferDelay = 10 * time.Millisecond

// deferrable reports whether t, about to commit under ctx, may defer.
func (f *FS) deferrable(ctx context.Context, t *txn) bool {
	d, _ := ctx.Value(deferKey{}).(bool)
	return d && !f.shared && f.batch == nil && len(t.hooks) == 0
}

// failed reports whether req (nil: none) is done and failed.
func (req *commitReq) failed() bool {
	if req == nil {
		return false
	}
	select {
	case <-req.done:
		return req.err != nil
	default:
		return false
	}
}

// enqueueDeferred queues req without waiting for it; the caller holds
// wmu. A timer settles it unless a commit carries it first.
func (f *FS) enqueueDeferred(req *commitReq) {
	req.deferred = true
	f.deferred.Add(1)
	// Handles reload what they hold: SeeDeferred readers see the change
	// now, others once it is durable.
	f.gen.Add(1)
	c := &f.commits
	c.mu.Lock()
	c.queue = append(c.queue, req)
	c.lastDeferred = req
	arm := !c.leading && !c.armed
	c.armed = c.armed || arm
	c.mu.Unlock()
	if arm {
		time.AfterFunc(deferDelay, func() {
			f.commits.mu.Lock()
			f.commits.armed = false
			f.commits.mu.Unlock()
			_ = f.settle()
		})
	}
}

// settle makes the deferred mutations queued so far durable, leading
// their commit when no one does, and returns the error of the last one.
// The caller holds neither wmu nor mu.
func (f *FS) settle() error {
	if f.deferred.Load() == 0 {
		return nil
	}
	return f.settleReq(nil)
}

// settleReq waits until req (nil: the last deferred request queued) is
// durable, leading the queue's commit when no one does, and returns its
// error.
func (f *FS) settleReq(req *commitReq) error {
	c := &f.commits
	c.mu.Lock()
	if req == nil {
		req = c.lastDeferred
	}
	if req == nil {
		c.mu.Unlock()
		return nil
	}
	lead := !c.leading && len(c.queue) > 0
	if lead {
		c.leading = true
	}
	c.mu.Unlock()
	if lead {
		ctx := context.Background()
		f.lead(ctx)
		f.maybeFold(ctx)
	}
	<-req.done
	return req.err
}

// Settle makes every mutation acknowledged so far durable, deferred ones
// (WithDeferredCommit) included: what reads the workspace's state from
// the metadata store directly (a checkpoint, a fork) calls it first.
func (f *FS) Settle(ctx context.Context) error {
	if err := f.settle(); err != nil {
		return fmt.Errorf("settle: %w", err)
	}
	return nil
}
