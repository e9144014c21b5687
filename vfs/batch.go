package vfs

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"slices"
	"sync"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/content"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/internal/tmpfile"
	"github.com/forkspace/forkspace/kv"
	"github.com/forkspace/forkspace/meta"
)

// Batch runs fn with b, a filesystem over f's latest state whose
// mutations are seen only through b while fn runs, and commits them all
// in one metadata transaction when fn returns nil: every mutation fn made
// lands, or none does. When fn fails, a mutation through b fails (the
// quota, counted over the whole batch, is passed; bad input), or the
// commit fails, f is exactly as before and Batch returns the error. A
// crash before Batch returns leaves f as before; when it returns nil the
// batch is durable.
//
// b offers every FS operation, handles included (a handle's Sync or Close
// commits into the batch; handles still open when fn returns are stale).
// Bytes are stored as fn writes them; only the metadata waits: chunks go
// to the blob store at once, and inline bodies are stored in transactions
// of their own every 16 MiB (aheadBytes) under an upload intent that keeps
// a collection from taking them and that the commit releases, so a
// batch's memory does not grow with its bytes. Nor does it grow with its
// entries: once b's overlay holds 4 × Options.FoldRows keys, they are
// folded into a tree of b's own whose new nodes are stored the same way
// (foldAhead), and the commit then points f's head at the batch's tree
// instead of staging its rows (commitFolded; not in a shared FS, nor in
// a batch of b). Nothing names what is stored ahead before the commit: a
// batch that fails leaves it to garbage collection. A stub of a
// lazy mount cannot be hydrated inside a batch, nor can b be folded (Fold,
// Root: errors.ErrUnsupported) or reset. b must not be used after fn
// returns. A batch of b is part of f's batch: it lands in it whole or
// not at all.
//
// While fn runs, other mutations of f wait (they queue on f's write lock;
// readers of f go on, seeing the state before the batch), and so do f's
// folds, forks (Hold) and resets. fn must therefore not mutate f itself,
// nor wait for something that does.
func (f *FS) Batch(ctx context.Context, fn func(b *FS) error) error {
	const op = "batch"
	if f.readOnly {
		return &fs.PathError{Op: op, Path: ".", Err: errdefs.ErrReadOnly}
	}
	if f.closed.Load() {
		return &fs.PathError{Op: op, Path: ".", Err: fs.ErrClosed}
	}
	// The hooks' first index of lazy mounts writes through f and is
	// awaited by any path operation (Virtual of the root awaits it):
	// settle it before b's operations wait for it under f's lock.
	f.virtual(ctx, ".")
	f.foldMu.Lock() // a batch that folds ahead replaces the head: no fold meanwhile
	f.lockIdle()
	locked := true
	defer func() {
		if locked { // fn panicked
			f.wmu.Unlock()
			f.foldMu.Unlock()
		}
	}()
	b := newFS(f.d, f.root)
	b.log, b.foldRows, b.quota = f.log, -1, f.quota // no ws: b never writes staging rows
	b.ov = f.wov.Clone()                            // everything is durable: wov equals ov
	b.wov, b.seq, b.inoNext, b.inoEnd = b.ov, f.seq, f.inoNext, f.inoEnd
	log := &batchLog{acc: txn{f: f}, foldAt: f.foldAheadRows()}
	defer log.changed.close()
	b.batch = log
	if f.hooks != nil {
		b.hooks = batchHooks{Hooks: f.hooks}
	}
	err := fn(b)
	b.closed.Store(true)
	b.wmu.Lock() // a straggling mutation of b finishes first
	f.inoNext, f.inoEnd = b.inoNext, b.inoEnd
	b.wmu.Unlock()
	if err == nil {
		err = log.err
	}
	locked = false
	switch {
	case err != nil || !log.folded && len(log.acc.muts)+len(log.acc.intents)+len(log.acc.also)+len(log.acc.hooks) == 0:
		f.wmu.Unlock()
		f.foldMu.Unlock()
		if err != nil {
			log.acc.dropHooks()
			return f.release(ctx, err, log.acc.intents)
		}
		return nil
	case log.folded:
		err = f.commitFolded(ctx, b, log)
		f.foldMu.Unlock()
	default:
		f.foldMu.Unlock()
		err = f.commitLocked(ctx, op, ".", &log.acc) // unlocks wmu
	}
	if err != nil {
		log.acc.dropHooks()
		return f.release(ctx, err, log.acc.intents)
	}
	for name := range log.changed.all() {
		f.changed(ctx, op, name)
	}
	return nil
}

// foldAheadRows is how many keys a Batch of f holds in its overlay before
// it folds them into a tree of its own (batchLog.foldAhead): four times
// Options.FoldRows. A batch inside a batch, or of a shared FS, never
// folds ahead (0): the one commits into its parent's batch, the other
// must advance the head generation with its staging rows (decision 023).
func (f *FS) foldAheadRows() int {
	if f.batch != nil || f.shared || f.foldRows <= 0 {
		return 0
	}
	return 4 * f.foldRows
}

// commitFolded commits a batch that folded ahead: the rest of its overlay
// is folded too, and one metadata transaction stores what was not stored
// ahead, releases the batch's intents, points the head at the batch's
// root and drops every staging row folded into it, so the whole batch,
// and f's delta before it, become visible and durable at once. The
// caller holds wmu, which commitFolded releases, and foldMu.
func (f *FS) commitFolded(ctx context.Context, b *FS, l *batchLog) error {
	defer f.wmu.Unlock()
	muts, _ := b.ov.Mutations()
	root, nodes, err := f.apply(ctx, b.root, muts)
	if err != nil {
		return fmt.Errorf("batch: fold: %w", err)
	}
	w := commitWork{inline: l.acc.inline, intents: l.acc.intents, also: l.acc.also, fold: &foldedTo{root: root, nodes: nodes, upTo: f.seq}}
	for _, h := range l.acc.hooks {
		w.after = append(w.after, h.fn)
	}
	if err := f.write(ctx, &w); err != nil {
		return err
	}
	f.mu.Lock()
	f.root, f.seq, f.sinceFold = root, b.seq, 0
	f.ov.Drop(w.fold.upTo)
	f.wov.Drop(w.fold.upTo)
	f.mu.Unlock()
	f.gen.Add(1)
	for _, h := range l.acc.hooks {
		h.done()
	}
	return nil
}

// AlsoCommit, on the filesystem a Batch passes to its function, adds fn to
// the batch's commit: fn runs in the metadata transaction that commits the
// batch, so its writes (rows that describe the batch, such as a merge's
// conflicts) land with the batch's mutations or not at all. A failing fn
// fails the commit. Anywhere else AlsoCommit is errors.ErrUnsupported.
func (f *FS) AlsoCommit(fn func(meta.Tx) error) error {
	if f.batch == nil || f.closed.Load() {
		return fmt.Errorf("also commit: %w: not a running batch", errors.ErrUnsupported)
	}
	f.batch.mu.Lock()
	f.batch.acc.also = append(f.batch.acc.also, fn)
	f.batch.mu.Unlock()
	return nil
}

// release releases the upload intents of a batch that failed with err and
// returns err, joined with a failure to release.
func (f *FS) release(ctx context.Context, err error, in content.Intents) error {
	if rerr := f.d.Content.Release(context.WithoutCancel(ctx), in); rerr != nil {
		return errors.Join(err, rerr)
	}
	return err
}

// batchLog is what a Batch's mutations add up to: their key mutations
// (the last value of each key), inline bodies and upload intents, and the
// paths to report changed once they are durable.
type batchLog struct {
	mu      sync.Mutex
	acc     txn
	changed pathList
	// inlineBytes counts the bytes of acc.inline; err is a failed early
	// store of them, which fails the batch.
	inlineBytes int
	err         error
	// foldAt is the size of b's overlay at which add folds it into b's
	// root (0: never); folded says it did, so the commit replaces the
	// head instead of staging rows.
	foldAt int
	folded bool
}

// pathList is a list of paths kept in one buffer, NUL after each (no
// path holds one): a batch of a million files holds their names in
// their bytes alone, without a string header and allocation each. Past
// spillPaths bytes the buffer is appended to an unlinked temporary file
// and emptied, so what a batch holds in memory is bounded whatever it
// writes; a failed spill keeps the paths in memory instead.
type pathList struct {
	buf    []byte
	spill  tmpfile.Log // the paths before buf's, if they outgrew it
	failed bool        // a spill failed: buf keeps everything since
}

// spillPaths is how many bytes of paths a pathList holds in memory.
var spillPaths = 4 << 20

func (l *pathList) add(names ...string) {
	for _, n := range names {
		l.buf = append(append(l.buf, n...), 0)
	}
	if len(l.buf) >= spillPaths && !l.failed {
		l.failed = l.spill.Append(l.buf) != nil
		if !l.failed {
			l.buf = l.buf[:0]
		}
	}
}

// all yields the paths in the order they were added. The spilled ones are
// read back from their file (a read error of it ends them early).
func (l *pathList) all() iter.Seq[string] {
	return func(yield func(string) bool) {
		r := bufio.NewReader(io.NewSectionReader(&l.spill, 0, l.spill.Size()))
		for {
			p, err := r.ReadString(0)
			if err != nil {
				break
			}
			if !yield(p[:len(p)-1]) {
				return
			}
		}
		for rest := l.buf; len(rest) > 0; {
			i := bytes.IndexByte(rest, 0)
			if !yield(string(rest[:i])) {
				return
			}
			rest = rest[i+1:]
		}
	}
}

// close removes the spill file, if any.
func (l *pathList) close() { _ = l.spill.Close() }

// aheadBytes is how many bytes of inline bodies a batch holds before it
// stores them ahead of its commit, so that its memory does not grow with
// the bytes it imports.
const aheadBytes = 16 << 20

// add takes over t's mutations and applies them to b's overlay, so b's
// later operations (scans included) see them, and stores the inline
// bodies held so far once they reach aheadBytes. The caller holds b.wmu.
func (l *batchLog) add(ctx context.Context, b *FS, t *txn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b.mu.Lock()
	for _, m := range t.muts {
		l.acc.put(m)
		b.seq++
		if m.Delete {
			b.ov.Delete(m.Key, b.seq)
		} else {
			b.ov.Set(m.Key, m.Value, b.seq)
		}
	}
	b.mu.Unlock()
	b.gen.Add(1)
	l.acc.inline = append(l.acc.inline, t.inline...)
	l.acc.intents = append(l.acc.intents, t.intents...)
	l.acc.also = append(l.acc.also, t.also...)
	l.acc.hooks = append(l.acc.hooks, t.hooks...)
	for _, o := range t.inline {
		l.inlineBytes += len(o.Data)
	}
	switch {
	case l.err != nil:
	case l.foldAt > 0 && b.ov.Len() >= l.foldAt:
		l.foldAhead(ctx, b)
	case l.inlineBytes >= aheadBytes:
		l.storeAhead(ctx, b, nil)
	}
}

// foldAhead folds b's overlay into a new root for b, stores the tree
// nodes it needs with the inline bodies held so far (storeAhead), and
// starts b over with that root and an empty overlay, so that what a batch
// holds in memory does not grow with its number of entries. Nothing names
// the new root until the commit (commitFolded). When the nodes cannot be
// stored yet (storeAhead kept them), b keeps its overlay and the next
// mutation tries again. The caller holds l.mu and b.wmu.
func (l *batchLog) foldAhead(ctx context.Context, b *FS) {
	muts, _ := b.ov.Mutations()
	root, nodes, err := b.apply(ctx, b.root, muts)
	if err != nil {
		l.err = fmt.Errorf("batch: fold ahead: %w", err)
		return
	}
	if !l.storeAhead(ctx, b, nodes) {
		return
	}
	b.mu.Lock()
	b.root, b.ov = root, kv.NewOverlay()
	b.wov = b.ov
	b.mu.Unlock()
	b.gen.Add(1)
	l.acc.muts, l.acc.index = nil, nil
	l.folded = true
}

// storeAhead stores the inline bodies held so far, and nodes, in a
// transaction of their own, under an upload intent on their hashes taken
// in that same transaction: a pending intent is a root of garbage
// collection (meta.GCTx, gc.NewPlan), so no collection deletes them before
// the batch's commit names them, and the batch releases the intent with
// that commit (or with its failure, leaving them to a later collection).
// Nothing names them until then, so a crash meanwhile leaves nothing
// visible. When a hash is being deleted by the collector
// (errdefs.ErrBusy), nothing is stored and the bodies are kept for the
// commit. storeAhead reports whether it stored them; the caller holds
// l.mu.
func (l *batchLog) storeAhead(ctx context.Context, b *FS, nodes []meta.Object) bool {
	bodies := l.acc.inline
	hashes := make([]cas.Hash, 0, len(bodies)+len(nodes))
	for _, o := range slices.Concat(bodies, nodes) {
		hashes = append(hashes, o.Hash)
	}
	slices.SortFunc(hashes, func(a, b cas.Hash) int { return bytes.Compare(a[:], b[:]) })
	hashes = slices.Compact(hashes)
	var id int64
	err := b.d.Meta.Update(ctx, func(tx meta.Tx) error {
		var err error
		if id, err = tx.AddIntents(hashes); err != nil {
			return err
		}
		if len(nodes) > 0 {
			if err := tx.PutNodes(nodes); err != nil {
				return err
			}
		}
		if len(bodies) > 0 {
			return tx.PutInline(bodies)
		}
		return nil
	})
	switch {
	case errors.Is(err, errdefs.ErrBusy):
		return false
	case err != nil:
		l.err = fmt.Errorf("batch: store ahead: %w", err)
		return false
	}
	l.acc.intents = append(l.acc.intents, id)
	l.acc.inline, l.inlineBytes = nil, 0
	return true
}

// batchHooks are the parent's hooks seen from a Batch: hydrating (which
// writes to the parent) is refused. Changes go to the batch's log
// (FS.changed), reported when the batch is durable.
type batchHooks struct {
	Hooks
}

func (h batchHooks) Hydrate(_ context.Context, name string) error {
	return fmt.Errorf("%w: lazy file %s cannot be hydrated inside a batch", errors.ErrUnsupported, name)
}
