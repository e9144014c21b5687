package vfs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/content"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/kv"
	"github.com/forkspace/forkspace/meta"
)

// Deps are the store components an FS reads and writes.
type Deps struct {
	Meta    meta.Store
	KV      *kv.Store
	Content *content.Store
	// Logger receives background failures (an automatic fold that failed
	// after its mutation succeeded). nil means slog.Default().
	Logger *slog.Logger
}

// Options configure a live FS. The zero value means defaults.
type Options struct {
	// FoldRows folds staging into a new tree root once the overlay holds
	// more than this many keys (default 4096; negative never folds
	// automatically).
	FoldRows int
	// Quota limits the workspace. The zero value means the workspace row's
	// quota.
	Quota meta.Quota
	// Shared says other processes may change the workspace (a store
	// several processes share, docs/decisions/023): every commit that
	// changes the state advances the workspace's head generation from the
	// one this FS mirrors (meta.Tx.AdvanceHead) and a fold checks it, so
	// an FS whose mirror is out of date commits nothing; it then reloads
	// the head and computes the mutation again. CatchUp catches up
	// without writing.
	Shared bool
	// From is the state the workspace's stored state is a copy of (a
	// fork's, taken by the parent's Hold and checked with
	// Durable.Mirrors in the transaction that copied it), and ws the row
	// that transaction wrote: Open then reads nothing, taking the root
	// and head generation from ws and From's overlay as its own, instead
	// of reading and decoding the staging rows. One Open only: the FS
	// owns the overlay afterwards. A From whose root is not ws's is
	// ignored. (If another process sharing the store changes the new
	// workspace first, its first commit finds the head moved and reloads,
	// as any stale mirror does.)
	From *Durable
}

const (
	defaultFoldRows = 4096
	// inoBatch is how many inode numbers an FS reserves from the store
	// counter at a time. Unused numbers are skipped, never reused.
	inoBatch = 256
)

// FS is the filesystem of one workspace state: the live, writable head of a
// workspace (Open) or a read-only tree root (Snapshot).
//
// Concurrency: all methods are safe for concurrent use. Mutations are
// computed one at a time (wmu) against the state including mutations not
// yet durable, then committed in groups: while one metadata transaction is
// in flight, the mutations that arrive queue up and go in the next one
// (commit.go). Readers see only durable state and never touch SQL beyond
// tree nodes the kv cache lacks. Only one live FS may be open per workspace
// at a time (it owns the workspace's staging rows).
type FS struct {
	d        Deps
	log      *slog.Logger
	ws       string // workspace ID; "" for a snapshot
	readOnly bool
	foldRows int
	// sinceFold counts the staging rows committed since the last fold or
	// reset (under mu): rewriting the same keys over and over folds too,
	// which bounds a staging epoch's log (docs/decisions/016).
	sinceFold int
	quota     meta.Quota
	closed    atomic.Bool

	// shared: see Options.Shared. headGen is the head generation the
	// durable state mirrors (written by the commit leader, Reset and
	// reload, which never run at once); reloads counts reloads, so a
	// fold computed before one commits nothing.
	shared  bool
	headGen atomic.Int64
	reloads atomic.Uint64

	foldMu sync.Mutex // serialises folds, resets, Holds and Batches

	// gen counts changes of the visible state, so handles reload only
	// when something changed.
	gen atomic.Uint64
	// epoch counts resets (reset.go): handles opened in an earlier epoch
	// are stale.
	epoch atomic.Uint64

	// Lock order: wmu, then mu.
	wmu     sync.Mutex  // serialises mutations; guards the fields below
	wov     *kv.Overlay // ov plus the mutations not yet durable
	seq     int64       // highest staging seq used
	inoNext uint64      // next reserved inode number
	inoEnd  uint64      // end of the reserved range

	mu   sync.RWMutex // guards root and ov (written under wmu too)
	root cas.Hash
	ov   *kv.Overlay // durable staged mutations; nil for a snapshot

	commits  committer
	deferred atomic.Int64 // deferred requests not done (WithDeferredCommit)

	hooks Hooks    // nil: no mounts (see SetHooks)
	watch watchers // callbacks of Watch

	// batch collects the mutations of a Batch's filesystem instead of
	// committing them (nil: commit each).
	batch *batchLog
}

// Open returns the live filesystem of workspace ws. It reads the
// workspace's committed root and staging rows in one snapshot; the staging
// rows (the durable write-ahead delta of every acknowledged mutation) become
// the in-memory overlay. Only ws.ID and, when opts.Quota is zero, ws.Quota
// are used from ws (and its Root and HeadGen with opts.From). A missing
// workspace is fs.ErrNotExist.
func Open(ctx context.Context, d Deps, ws *meta.Workspace, opts Options) (*FS, error) {
	root, ov, seq, gen, err := openHead(ctx, d.Meta, ws, opts.From)
	if err != nil {
		return nil, fmt.Errorf("open workspace %s: %w", ws.ID, err)
	}
	f := newFS(d, root)
	f.ws, f.ov, f.wov, f.seq = ws.ID, ov, ov.Clone(), seq
	f.log = f.log.With("workspace", ws.ID)
	f.foldRows = opts.FoldRows
	if f.foldRows == 0 {
		f.foldRows = defaultFoldRows
	}
	f.quota = opts.Quota
	if f.quota == (meta.Quota{}) {
		f.quota = ws.Quota
	}
	f.shared = opts.Shared
	f.headGen.Store(gen)
	return f, nil
}

// openHead returns the state workspace ws opens at: its committed root,
// its staging overlay and highest seq, and its head generation. With from
// (see Options.From) holding ws's root, they are ws's root and head
// generation (the row the fork's transaction wrote) and from's overlay,
// and nothing is read; otherwise they are read in one snapshot.
func openHead(ctx context.Context, m meta.Store, ws *meta.Workspace, from *Durable) (root cas.Hash, ov *kv.Overlay, seq, gen int64, err error) {
	if from != nil && ws.Root == from.root {
		return ws.Root, from.ov, from.seq, ws.HeadGen, nil
	}
	root, rows, gen, err := readHead(ctx, m, ws.ID, -1)
	if err != nil {
		return cas.Hash{}, nil, 0, 0, err
	}
	ov, seq = overlayOf(rows)
	return root, ov, seq, gen, nil
}

// readHead reads a workspace's committed root, staging rows and head
// generation in one snapshot; at generation have (what a mirror already
// holds; -1: none) it reads only the generation, not the rows.
func readHead(ctx context.Context, m meta.Store, id string, have int64) (root cas.Hash, rows []meta.Staged, gen int64, err error) {
	err = m.View(ctx, func(tx meta.Tx) error {
		w, err := tx.Workspace(id)
		if err != nil {
			return err
		}
		root, gen = w.Root, w.HeadGen
		if gen == have {
			return nil
		}
		rows, err = tx.Staged(id)
		return err
	})
	return root, rows, gen, err
}

// Snapshot returns a read-only filesystem over a state: the tree rooted at
// root with the staging rows staged on top (a checkpoint's state, or nil).
// Every mutation fails with a *fs.PathError wrapping errdefs.ErrReadOnly.
func Snapshot(d Deps, root cas.Hash, staged []meta.Staged) *FS {
	f := newFS(d, root)
	f.readOnly = true
	if len(staged) > 0 {
		f.ov, _ = overlayOf(staged)
	}
	return f
}

// overlayOf builds the overlay of staging rows and returns their highest
// sequence number.
func overlayOf(rows []meta.Staged) (*kv.Overlay, int64) {
	ov := kv.NewOverlay()
	var seq int64
	for _, r := range rows {
		if r.Deleted {
			ov.Delete(r.Key, r.Seq)
		} else {
			ov.Set(r.Key, r.Value, r.Seq)
		}
		seq = max(seq, r.Seq)
	}
	return ov, seq
}

func newFS(d Deps, root cas.Hash) *FS {
	log := d.Logger
	if log == nil {
		log = slog.Default()
	}
	f := &FS{d: d, log: log.With("component", "vfs"), root: root}
	f.commits.drained = sync.NewCond(&f.commits.mu)
	return f
}

// NewTree builds the tree of an empty filesystem (the root directory, inode
// 1, mode 0755, times now) for a new workspace. The caller stores nodes
// (meta.Tx.PutNodes) in the transaction that records root.
func NewTree(ctx context.Context, d Deps, now time.Time) (root cas.Hash, nodes []kv.Node, err error) {
	a := rootAttr(now.UnixNano())
	muts := []kv.Mutation{
		{Key: inoKey(rootIno, kindAttr, ""), Value: encodeAttr(&a)},
		{Key: usageKey, Value: encodeUsage(Usage{})},
	}
	root, nodes, err = d.KV.Apply(ctx, cas.Hash{}, muts)
	if err != nil {
		return cas.Hash{}, nil, fmt.Errorf("build empty tree: %w", err)
	}
	return root, nodes, nil
}

// rootAttr is the root directory of an empty filesystem.
func rootAttr(now int64) attr {
	return attr{typ: typeDir, perm: 0o755, nlink: 2, atime: now, mtime: now, ctime: now}
}

// ReadOnly reports whether f is a read-only snapshot.
func (f *FS) ReadOnly() bool { return f.readOnly }

// Close releases f. Acknowledged mutations are already durable in staging,
// so Close does not fold. Handles should be closed first: data a handle has
// not synced is lost. Operations after Close fail with fs.ErrClosed.
// Close is idempotent.
func (f *FS) Close() error {
	err := f.settle()
	f.closed.Store(true)
	if err != nil {
		return fmt.Errorf("close: %w", err)
	}
	return nil
}

// viewLocked returns the merged view; the caller holds mu.
func (f *FS) viewLocked() kv.View {
	return kv.View{Store: f.d.KV, Root: f.root, Overlay: f.ov}
}

// frozenView returns the merged view of the current durable state, with an
// overlay that later mutations do not change: a snapshot's own (it never
// changes; a fold replaces it), a live FS's a copy (taken under the write
// lock: cloning a btree writes to it).
func (f *FS) frozenView() (kv.View, error) {
	if f.closed.Load() {
		return kv.View{}, fs.ErrClosed
	}
	if f.readOnly {
		f.mu.RLock()
		defer f.mu.RUnlock()
		return f.viewLocked(), nil
	}
	_ = f.settle()
	f.mu.Lock()
	defer f.mu.Unlock()
	v := f.viewLocked()
	v.Overlay = v.Overlay.Clone()
	return v, nil
}

// read runs fn under the read lock on a transaction with no mutations,
// over the durable state once the deferred mutations are
// (WithDeferredCommit), or, under SeeDeferred, over the state they make
// without waiting for them.
func (f *FS) read(ctx context.Context, op, name string, fn func(t *txn) error) error {
	if f.closed.Load() {
		return &fs.PathError{Op: op, Path: name, Err: fs.ErrClosed}
	}
	if f.deferred.Load() > 0 {
		if see, _ := ctx.Value(seeKey{}).(bool); see {
			f.wmu.Lock()
			defer f.wmu.Unlock()
			t := txn{f: f, view: kv.View{Store: f.d.KV, Root: f.root, Overlay: f.wov}}
			return errdefs.PathError(op, name, fn(&t))
		}
		_ = f.settle() // a failed deferred mutation left the durable state
	}
	f.mu.RLock()
	defer f.mu.RUnlock()
	t := txn{f: f, view: f.viewLocked()}
	return errdefs.PathError(op, name, fn(&t))
}

// update runs fn on a transaction over the latest state and commits the
// mutations it staged: one meta.Update (shared with concurrent mutations)
// writes inline bodies and staging rows, then the overlay readers use
// takes them. update returns once the mutation is durable. If fn or the
// commit fails nothing is visible.
func (f *FS) update(ctx context.Context, op, name string, fn func(t *txn) error) error {
	return f.updateContent(ctx, op, name, nil, fn)
}

// updateContent is update for an operation that records content whose
// chunks are held by upload intents: the commit releases them. When it
// fails the intents stay held; the caller retries or releases them. The
// hooks (SetHooks) may refuse the mutation first and hear of it after.
func (f *FS) updateContent(ctx context.Context, op, name string, in content.Intents, fn func(t *txn) error) error {
	if f.readOnly {
		return &fs.PathError{Op: op, Path: name, Err: errdefs.ErrReadOnly}
	}
	if err := f.checkWrite(ctx, op, name); err != nil {
		return err
	}
	var last *txn
	err := f.mutate(ctx, op, name, in, func(t *txn) error {
		last = t
		err := fn(t)
		if len(t.muts) > 0 {
			t.changed = func() { f.changed(ctx, op, name) }
		}
		return err
	})
	if err != nil {
		return err
	}
	// A deferred mutation reports its change once durable.
	if last != nil && last.changed != nil && last.req == nil {
		last.changed()
	}
	return nil
}

// mutate is updateContent without the hooks.
func (f *FS) mutate(ctx context.Context, op, name string, in content.Intents, fn func(t *txn) error) error {
	if f.readOnly {
		return &fs.PathError{Op: op, Path: name, Err: errdefs.ErrReadOnly}
	}
	if f.closed.Load() {
		return &fs.PathError{Op: op, Path: name, Err: fs.ErrClosed}
	}
	for attempt := 1; ; attempt++ {
		f.wmu.Lock()
		reloads := f.reloads.Load()
		t := txn{f: f, view: kv.View{Store: f.d.KV, Root: f.root, Overlay: f.wov}, intents: in, now: time.Now().UnixNano()}
		if err := fn(&t); err != nil {
			f.wmu.Unlock()
			// The mutation may have failed on an out-of-date mirror
			// (a parent another process created): if the head moved
			// (and was reloaded meanwhile, or is now), try again on
			// the current one.
			if f.shared && attempt < maxHeadRetries && (f.reloads.Load() != reloads || f.reloadIfMoved(ctx)) {
				continue
			}
			return errdefs.PathError(op, name, err)
		}
		if len(t.muts) == 0 && len(t.intents) == 0 {
			f.wmu.Unlock()
			return nil
		}
		err := f.commitLocked(ctx, op, name, &t)
		// Another process changed the workspace since this FS read it:
		// the failed commit reloaded the head (abandon), so computing
		// the mutation again applies it to the current state.
		if !errors.Is(err, meta.ErrHeadMoved) || attempt == maxHeadRetries {
			return err
		}
		if err := headBackoff(ctx, attempt); err != nil {
			return errdefs.PathError(op, name, err)
		}
	}
}

// maxHeadRetries bounds how many times a mutation is computed again
// because other processes kept changing the workspace (Options.Shared).
const maxHeadRetries = 100

// headBackoff waits before the attempt after a commit lost to another
// process's: a random pause of up to 1 ms doubling with each attempt to
// at most 64 ms, so that two processes writing one workspace stop
// invalidating each other in lockstep.
func headBackoff(ctx context.Context, attempt int) error {
	d := time.Duration(rand.Int64N(int64(time.Millisecond) << min(attempt-1, 6)))
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(d):
		return nil
	}
}

// commitLocked commits t's mutations (group commit) and returns once they
// are durable, or, on a Batch's filesystem, adds them to the batch; the
// caller holds wmu, which commitLocked releases.
func (f *FS) commitLocked(ctx context.Context, op, name string, t *txn) error {
	if h := takeCommitHook(ctx); h != nil {
		t.hooks = append(t.hooks, h)
	}
	if f.batch != nil {
		f.batch.add(ctx, f, t)
		f.wmu.Unlock()
		return nil
	}
	req := f.stage(t)
	if f.deferrable(ctx, t) {
		req.changed, t.req = t.changed, req
		f.enqueueDeferred(req)
		f.wmu.Unlock()
		return nil
	}
	lead := f.commits.enqueue(req)
	f.wmu.Unlock()
	if lead {
		f.lead(ctx)
	}
	<-req.done
	if req.err != nil {
		t.dropHooks()
		return errdefs.PathError(op, name, req.err)
	}
	f.maybeFold(ctx)
	return nil
}

// maybeFold folds staging when the overlay has grown past
// Options.FoldRows, unless a fold is under way.
func (f *FS) maybeFold(ctx context.Context) {
	f.mu.RLock()
	fold := f.foldRows > 0 && (f.ov.Len() > f.foldRows || f.sinceFold > 2*f.foldRows)
	f.mu.RUnlock()
	if fold && f.foldMu.TryLock() {
		// The mutation is durable; a failed fold leaves staging in place
		// and is retried by the next one.
		// Another process moving the head in between is no failure: the
		// next commit folds again on the current one.
		if err := f.foldLocked(ctx); err != nil && !errors.Is(err, fs.ErrClosed) && !errors.Is(err, meta.ErrHeadMoved) {
			f.log.Warn("automatic fold failed", "err", err)
		}
		f.foldMu.Unlock()
	}
}

// allocIno returns a fresh, store-wide inode number. The caller holds wmu.
func (f *FS) allocIno(ctx context.Context) (uint64, error) {
	if f.inoNext == f.inoEnd {
		var first int64
		err := f.d.Meta.Update(ctx, func(tx meta.Tx) error {
			var err error
			first, err = tx.Allocate("ino", inoBatch)
			return err
		})
		if err != nil {
			return 0, fmt.Errorf("allocate inodes: %w", err)
		}
		f.inoNext, f.inoEnd = uint64(first), uint64(first)+inoBatch
		if f.inoNext <= rootIno {
			f.inoNext = rootIno + 1 // inode 1 is every workspace's root
		}
	}
	ino := f.inoNext
	f.inoNext++
	return ino, nil
}

// Sync waits for the disk: when it returns nil every change acknowledged
// before the call (deferred ones included: WithDeferredCommit), to any workspace of the store, survives a power loss
// (meta.Sync: the blobs' barrier, then the metadata's; docs/decisions/021).
// Committed changes survive the death of the process without it.
func (f *FS) Sync(ctx context.Context) error {
	if err := f.Settle(ctx); err != nil {
		return fmt.Errorf("sync: %w", err)
	}
	if err := meta.Sync(ctx, f.d.Meta); err != nil {
		return fmt.Errorf("sync: %w", err)
	}
	return nil
}
