package content

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"sort"
	"sync"

	"github.com/forkspace/forkspace/meta"
)

var _ io.WriterAt = (*Draft)(nil)

// Draft is a file being written: a base manifest plus dirty ranges buffered
// in memory (spilled to a temp file past Options.SpillBytes). Not safe for
// concurrent use.
type Draft struct {
	s    *Store
	base Manifest
	// baseLimit is where base bytes stop showing through: the smallest
	// size the draft was truncated to since its base. Bytes at or past it
	// that no write covers read as zeros.
	baseLimit int64
	size      int64
	spans     []span  // written ranges, sorted and disjoint
	baseEnds  []int64 // end offset of each base extent, built on demand
	// baseCut and baseHeld say base is the prefix a CommitAhead stored:
	// its last chunk ends at a decided boundary (layout.baseCut), and
	// the caller holds intents on its chunks (layout.baseHeld).
	baseCut, baseHeld bool
	wins              []*[windowBytes]byte // the last commit's windows, for the next
	log               dirtyLog
	kept              int64 // bytes of log the last commit kept (the undecided tail)
	closed            bool
	err               error // a bad base: reads and Commit fail with it

	// job is the commit ahead StartAhead runs in the background, until a
	// call that needs the whole draft merges it back (settle).
	job *aheadJob
	// held are the intents of background commits ahead merged into the
	// draft and not yet returned; aheadErr is the failure of one, returned
	// by the next StartAhead, CommitAhead or Commit.
	held     Intents
	aheadErr error
	// gap is the room left at the start of the log StartAhead gave the
	// draft, for the bytes its job leaves undecided (settle).
	gap int64
	// spareFlat is a merged job's flat log, for the next StartAhead.
	spareFlat *[flatBytes]byte
}

// aheadJob is a commit ahead running on its own goroutine over the
// draft's state at StartAhead (frozen), while the writer appends to a new
// log. frozen is touched only by the job until done is closed.
type aheadJob struct {
	frozen *Draft
	ctx    context.Context
	done   chan struct{}
	m      Manifest
	in     Intents
	err    error
}

// span maps the file range [off, off+n) to the dirty log at logOff.
type span struct {
	off, n, logOff int64
}

func (sp span) end() int64 { return sp.off + sp.n }

// NewDraft starts a draft over base. If base is inconsistent (extents
// that do not add up to its size) the draft's reads and Commit fail with
// errdefs.ErrCorrupt.
func (s *Store) NewDraft(base Manifest) *Draft {
	d := &Draft{s: s, base: base, baseLimit: base.Size, size: base.Size, log: dirtyLog{limit: s.opts.SpillBytes}}
	if err := base.check(); err != nil {
		d.base, d.baseLimit, d.size, d.err = Manifest{}, 0, 0, err
	}
	return d
}

// Size returns the draft's current size.
func (d *Draft) Size() int64 { return d.size }

// Dirty reports whether the draft may differ from its base: it was written
// or resized since NewDraft or the last Commit.
func (d *Draft) Dirty() bool {
	return d.job != nil || len(d.spans) > 0 || d.size != d.base.Size || d.baseLimit < d.base.Size
}

// Buffered returns how many written bytes the draft holds (in memory or
// spilled) since NewDraft or the last Commit, a background commit
// ahead's included.
func (d *Draft) Buffered() int64 {
	if d.job != nil {
		return d.log.size + d.job.frozen.log.size
	}
	return d.log.size
}

// BufferedSinceCommit returns how many of the buffered bytes were written
// since the last commit, ahead or not (StartAhead's included): Buffered
// less the undecided tail that commit kept. A writer committing ahead every N bytes compares it
// with N, so a kept tail never triggers the next commit by itself.
func (d *Draft) BufferedSinceCommit() int64 { return d.log.size - d.kept }

// Base returns the manifest the draft's unwritten bytes come from.
func (d *Draft) Base() Manifest {
	d.settle()
	return d.base
}

// WriteAt writes p at off, extending the file (with a hole) as needed. p is
// not retained. A negative offset or a size past 2^63 fails with
// fs.ErrInvalid, a discarded draft with fs.ErrClosed.
func (d *Draft) WriteAt(p []byte, off int64) (int, error) {
	switch {
	case d.closed:
		return 0, fmt.Errorf("write draft: %w", fs.ErrClosed)
	case off < 0 || int64(len(p)) > math.MaxInt64-off:
		return 0, fmt.Errorf("write draft at %d: %w", off, fs.ErrInvalid)
	case len(p) == 0:
		return 0, nil
	}
	logOff, err := d.log.append(p)
	if err != nil {
		return 0, fmt.Errorf("write draft: %w", err)
	}
	d.insert(span{off: off, n: int64(len(p)), logOff: logOff})
	d.size = max(d.size, off+int64(len(p)))
	return len(p), nil
}

// insert makes ns the only span over its range, trimming the spans it
// overlaps and merging it with a predecessor it continues in the log.
func (d *Draft) insert(ns span) {
	i := sort.Search(len(d.spans), func(i int) bool { return d.spans[i].end() > ns.off })
	j := i
	for j < len(d.spans) && d.spans[j].off < ns.end() {
		j++
	}
	repl := make([]span, 0, 3)
	at := i // index of ns after the splice
	if i < j && d.spans[i].off < ns.off {
		left := d.spans[i]
		left.n = ns.off - left.off
		repl = append(repl, left)
		at++
	}
	repl = append(repl, ns)
	if i < j {
		if last := d.spans[j-1]; last.end() > ns.end() {
			cut := ns.end() - last.off
			repl = append(repl, span{off: ns.end(), n: last.n - cut, logOff: last.logOff + cut})
		}
	}
	d.spans = append(d.spans[:i], append(repl, d.spans[j:]...)...)
	// Merge a sequential write into the span before it.
	if at > 0 {
		if prev := d.spans[at-1]; prev.end() == ns.off && prev.logOff+prev.n == ns.logOff {
			d.spans[at-1].n += ns.n
			d.spans = append(d.spans[:at], d.spans[at+1:]...)
		}
	}
}

// Truncate sets the draft's size; growth reads as zeros. A negative size
// fails with fs.ErrInvalid.
func (d *Draft) Truncate(size int64) error {
	d.settle()
	switch {
	case d.closed:
		return fmt.Errorf("truncate draft: %w", fs.ErrClosed)
	case size < 0:
		return fmt.Errorf("truncate draft to %d: %w", size, fs.ErrInvalid)
	}
	if size < d.size {
		i := sort.Search(len(d.spans), func(i int) bool { return d.spans[i].end() > size })
		if i < len(d.spans) && d.spans[i].off < size {
			d.spans[i].n = size - d.spans[i].off
			i++
		}
		d.spans = d.spans[:i]
		d.baseLimit = min(d.baseLimit, size)
	}
	d.size = size
	return nil
}

// ReadAt reads the draft's current bytes with io.ReaderAt semantics.
func (d *Draft) ReadAt(ctx context.Context, p []byte, off int64) (int, error) {
	d.settle()
	switch {
	case d.closed:
		return 0, fmt.Errorf("read draft: %w", fs.ErrClosed)
	case d.s.err != nil || d.err != nil:
		return 0, fmt.Errorf("read draft: %w", errors.Join(d.s.err, d.err))
	case off < 0:
		return 0, fmt.Errorf("read draft at %d: %w", off, fs.ErrInvalid)
	case off >= d.size:
		return 0, io.EOF
	}
	n := int(min(int64(len(p)), d.size-off))
	if err := d.readAt(ctx, p[:n], off, true); err != nil {
		return 0, fmt.Errorf("read draft: %w", err)
	}
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

// readAt fills p, which must lie within the draft, from the dirty log, the
// base and zeros; ahead allows reading ahead in the base.
func (d *Draft) readAt(ctx context.Context, p []byte, off int64, ahead bool) error {
	end := off + int64(len(p))
	i := sort.Search(len(d.spans), func(i int) bool { return d.spans[i].end() > off })
	for pos := off; pos < end; {
		if i < len(d.spans) && d.spans[i].off <= pos {
			sp := d.spans[i]
			hi := min(end, sp.end())
			if err := d.log.readAt(p[pos-off:hi-off], sp.logOff+pos-sp.off); err != nil {
				return err
			}
			pos = hi
			i++
			continue
		}
		next := end
		if i < len(d.spans) {
			next = min(next, d.spans[i].off)
		}
		if pos < d.baseLimit {
			hi := min(next, d.baseLimit)
			if err := d.s.readExtents(ctx, d.base, p[pos-off:hi-off], pos, ahead); err != nil {
				return err
			}
			pos = hi
		}
		clear(p[pos-off : next-off])
		pos = next
	}
	return nil
}

// Commit stores the draft's bytes: new chunks go to the blob store before
// Commit returns; a body of at most InlineMax bytes is returned in inline
// for the caller to write (meta.Tx.PutInline) in the same transaction as the
// manifest. Unchanged chunks of the base are reused without being read when
// chunk boundaries allow. The draft stays usable; after Commit its base is
// the returned manifest. A draft that is not Dirty returns its base and no
// inline body (a base that CommitAhead stored is then the file: the
// caller records it with the intents that CommitAhead returned). On error
// the draft is unchanged.
//
// The returned intents protect the manifest's chunks from garbage
// collection until the caller releases them (meta.Tx.ReleaseIntents) in
// the transaction that records the manifest, or with Store.Release.
//
// A commit ahead still running in the background (StartAhead) is waited
// for first: Commit fails with its failure, if any, leaving the draft as
// it was before it, and otherwise returns its intents with its own.
func (d *Draft) Commit(ctx context.Context) (m Manifest, inline []meta.Object, in Intents, err error) {
	d.settle()
	switch {
	case d.closed:
		return Manifest{}, nil, nil, fmt.Errorf("commit draft: %w", fs.ErrClosed)
	case d.aheadErr != nil:
		return Manifest{}, nil, nil, fmt.Errorf("commit draft: %w", d.takeAheadErr())
	case d.s.err != nil || d.err != nil:
		return Manifest{}, nil, nil, fmt.Errorf("commit draft: %w", errors.Join(d.s.err, d.err))
	case !d.Dirty():
		d.baseHeld = false // the caller records the base and lets its intents go
		d.log.reset()      // and the memory a commit ahead kept
		d.kept = 0
		d.releaseWindows()
		return d.base, nil, d.takeHeld(), nil
	}
	m, inline, in, err = d.commit(ctx, false)
	if err != nil {
		return Manifest{}, nil, nil, fmt.Errorf("commit draft: %w", err)
	}
	return m, inline, append(in, d.takeHeld()...), nil
}

// CommitAhead is Commit for a draft that is still being written: it
// stores the chunks its bytes already decide and keeps the rest, the
// bytes after the last boundary that could still move with the bytes
// written next (less than Params.MaxSize), buffered. The returned
// manifest describes the prefix stored, not the file, and becomes the
// draft's base; the draft stays Dirty while it holds bytes past it, and a
// later Commit reuses the prefix's chunks without reading them. A writer
// appending a large file calls it every few MiB, so its bytes are chunked
// as they arrive and no chunk is read back or stored twice. The intents
// returned hold the prefix's chunks as Commit's do; the caller keeps them
// until it records or abandons the manifest of a later commit, which
// does not hold the prefix's chunks again. On error the draft is
// unchanged.
//
// A commit ahead running in the background (StartAhead) is waited for
// first, as Commit does.
func (d *Draft) CommitAhead(ctx context.Context) (m Manifest, inline []meta.Object, in Intents, err error) {
	d.settle()
	switch {
	case d.closed:
		return Manifest{}, nil, nil, fmt.Errorf("commit draft ahead: %w", fs.ErrClosed)
	case d.aheadErr != nil:
		return Manifest{}, nil, nil, fmt.Errorf("commit draft ahead: %w", d.takeAheadErr())
	case d.s.err != nil || d.err != nil:
		return Manifest{}, nil, nil, fmt.Errorf("commit draft ahead: %w", errors.Join(d.s.err, d.err))
	case !d.Dirty():
		return d.base, nil, d.takeHeld(), nil
	}
	m, inline, in, err = d.commit(ctx, true)
	if err != nil {
		return Manifest{}, nil, nil, fmt.Errorf("commit draft ahead: %w", err)
	}
	return m, inline, append(in, d.takeHeld()...), nil
}

// StartAhead is CommitAhead on another goroutine: it returns at once and
// the chunks the draft's bytes so far decide are stored while the caller
// goes on writing, so a large file's copying, chunking, hashing and
// writing of blobs overlap. Only WriteAt, Size, Dirty, Buffered and
// BufferedSinceCommit run beside it; every other method waits for it
// first (the draft is still not safe for concurrent use: its caller
// serialises its calls). One runs at a time: StartAhead waits for the
// previous one and returns its intents (the caller keeps them as it
// keeps CommitAhead's) or its failure; after a failure the draft is as
// it was before that commit ahead (nothing of it is held) and no new one
// starts. A later Commit or CommitAhead waits likewise, and returns the
// running one's intents with its own or fails with its failure. A draft
// too small to leave inline does nothing in the background.
func (d *Draft) StartAhead(ctx context.Context) (Intents, error) {
	d.settle()
	switch {
	case d.closed:
		return nil, fmt.Errorf("commit draft ahead: %w", fs.ErrClosed)
	case d.aheadErr != nil:
		return nil, fmt.Errorf("commit draft ahead: %w", d.takeAheadErr())
	case d.s.err != nil || d.err != nil:
		return nil, fmt.Errorf("commit draft ahead: %w", errors.Join(d.s.err, d.err))
	}
	in := d.takeHeld()
	if !d.Dirty() || d.size <= int64(d.s.opts.InlineMax) {
		return in, nil
	}
	// The job takes the draft's state; the draft keeps writing into a
	// new log (with the memory of the last merged one) until settle
	// lays what it writes over what the job leaves.
	f := &Draft{
		s: d.s, base: d.base, baseLimit: d.baseLimit, size: d.size, spans: d.spans,
		baseEnds: d.baseEnds, baseCut: d.baseCut, baseHeld: d.baseHeld, wins: d.wins, log: d.log,
	}
	//
	// The new log is flat, and starts with a gap of MaxSize bytes: the
	// bytes the job leaves undecided (less than MaxSize) go at its end,
	// right before what the writer appends, so the next commit ahead
	// reads one run of memory.
	gap := int64(d.s.opts.Params.MaxSize)
	flat := d.spareFlat
	if flat == nil {
		flat = flatPool.Get().(*[flatBytes]byte)
	}
	d.log = dirtyLog{limit: f.log.limit, flat: flat, size: gap, spare: f.log.spare}
	d.spareFlat, f.log.spare = nil, nil
	d.spans, d.wins, d.kept, d.gap = nil, nil, gap, gap
	j := &aheadJob{frozen: f, ctx: context.WithoutCancel(ctx), done: make(chan struct{})}
	d.job = j
	go func() {
		defer close(j.done)
		l := &layout{
			size: f.size, base: f.base, baseLimit: f.baseLimit, dirty: f.spans, src: &draftSource{d: f},
			baseCut: f.baseCut, baseHeld: f.baseHeld, ahead: true,
		}
		j.m, _, j.in, j.err = f.s.commit(ctx, l)
	}()
	return in, nil
}

// settle waits for the background commit ahead, if any, and merges the
// draft back into one: the job's result (its prefix manifest as the new
// base, the bytes past it; or, after a failure, the job's state as it
// was) under the spans written meanwhile.
func (d *Draft) settle() {
	j := d.job
	if j == nil {
		return
	}
	<-j.done
	d.job = nil
	f := j.frozen
	newer := d.spans
	// The bytes the job leaves past its prefix (after a failure: every
	// byte it was given) join the new log after what the writer wrote
	// meanwhile.
	var tail []span
	var err error
	if j.err == nil {
		d.base, d.baseLimit, d.baseEnds, d.baseCut, d.baseHeld = j.m, j.m.Size, nil, true, true
		d.held = append(d.held, j.in...)
		if n := f.size - j.m.Size; n > 0 && n <= d.gap && d.log.flat != nil {
			// In the gap, right before the bytes written meanwhile.
			logOff := d.gap - n
			err = f.readAt(j.ctx, d.log.flat[logOff:d.gap], j.m.Size, false)
			tail = []span{{off: j.m.Size, n: n, logOff: logOff}}
		} else if n > 0 {
			var logOff int64
			logOff, err = d.log.appendFill(n, func(p []byte, off int64) error {
				return f.readAt(j.ctx, p, j.m.Size+off, false)
			})
			tail = []span{{off: j.m.Size, n: n, logOff: logOff}}
			d.kept += n
		}
	} else {
		d.base, d.baseLimit, d.baseEnds, d.baseCut, d.baseHeld = f.base, f.baseLimit, f.baseEnds, f.baseCut, f.baseHeld
		d.aheadErr = j.err
		for _, sp := range f.spans {
			if err != nil {
				break
			}
			var logOff int64
			logOff, err = d.log.appendFill(sp.n, func(p []byte, off int64) error {
				return f.log.readAt(p, sp.logOff+off)
			})
			tail = append(tail, span{off: sp.off, n: sp.n, logOff: logOff})
			d.kept += sp.n
		}
	}
	if err != nil {
		// The bytes could not be kept (the spill file failed): the draft
		// fails from now on, as with a bad base.
		d.err = errors.Join(d.err, fmt.Errorf("keep bytes of a commit ahead: %w", err))
	}
	d.spans = tail
	for _, sp := range newer {
		d.insert(sp)
	}
	d.gap = 0
	d.wins = append(d.wins, f.wins...)
	d.spareFlat = f.log.flat
	d.log.spare = append(d.log.spare, f.log.blocks...)
	d.log.spare = append(d.log.spare, f.log.spare...)
	f.log.flat, f.log.blocks, f.log.spare = nil, nil, nil
	f.log.reset()
}

// takeHeld returns the intents of merged background commits, which the
// caller now holds.
func (d *Draft) takeHeld() Intents {
	in := d.held
	d.held = nil
	return in
}

func (d *Draft) takeAheadErr() error {
	err := d.aheadErr
	d.aheadErr = nil
	return err
}

// commit stores the draft (or, ahead, its decided prefix) and rebases
// the draft on the result, keeping the bytes past the prefix.
func (d *Draft) commit(ctx context.Context, ahead bool) (Manifest, []meta.Object, Intents, error) {
	l := &layout{
		size: d.size, base: d.base, baseLimit: d.baseLimit, dirty: d.spans, src: &draftSource{d: d},
		baseCut: d.baseCut, baseHeld: d.baseHeld, ahead: ahead,
	}
	m, inline, in, err := d.s.commit(ctx, l)
	if err != nil {
		return Manifest{}, nil, nil, err
	}
	var rest []byte
	if m.Size < d.size {
		rest = make([]byte, d.size-m.Size)
		if err := d.readAt(ctx, rest, m.Size, false); err != nil {
			return Manifest{}, nil, nil, errors.Join(err, d.s.Release(context.WithoutCancel(ctx), in))
		}
	}
	if int64(len(rest)) > d.log.limit {
		// The rest goes to a spill file, which may fail: fill a new log
		// first, so that a failure leaves the draft as it was.
		log := dirtyLog{limit: d.log.limit}
		if _, err := log.append(rest); err != nil {
			log.reset()
			return Manifest{}, nil, nil, errors.Join(err, d.s.Release(context.WithoutCancel(ctx), in))
		}
		d.log.reset()
		d.log = log
	} else if ahead {
		// More bytes are coming: keep the memory for them.
		d.log.recycle()
		d.log.appendMem(rest)
	} else {
		d.log.reset()
		d.releaseWindows()
	}
	d.base, d.baseLimit, d.baseEnds, d.baseCut, d.baseHeld = m, m.Size, nil, ahead, ahead
	d.kept = d.log.size
	d.spans = nil
	if len(rest) > 0 {
		d.spans = []span{{off: m.Size, n: int64(len(rest))}}
	}
	return m, inline, in, nil
}

// Discard releases the draft's buffers, after waiting for a commit ahead
// running in the background, and the intents of such commits that no
// call returned yet (its error is that release's). Later calls other
// than Size, Dirty and Base fail with fs.ErrClosed; Discard is
// idempotent.
func (d *Draft) Discard() error {
	d.settle()
	var err error
	if in := d.takeHeld(); len(in) > 0 {
		err = d.s.Release(context.Background(), in)
	}
	d.aheadErr = nil
	d.closed = true
	d.spans = nil
	d.log.reset()
	if d.spareFlat != nil {
		flatPool.Put(d.spareFlat)
		d.spareFlat = nil
	}
	d.releaseWindows()
	return err
}

// releaseWindows returns the windows a draft kept to the pool.
func (d *Draft) releaseWindows() {
	for _, w := range d.wins {
		windowPool.Put(w)
	}
	d.wins = nil
}

// draftSource serves a draft's bytes to the chunker through windows that
// are not reused before the commit ends, so chunk slices stay valid while
// workers put them; then they return to a pool.
type draftSource struct {
	d      *Draft
	win    []byte
	winOff int64
	used   []*[windowBytes]byte // pooled windows, returned by done
}

// windowBytes is how much of a draft the chunker reads at once.
const windowBytes = 16 << 20

// smallWindow is the largest window allocated to its size rather than
// taken from windowPool.
const smallWindow = 64 << 10

// windowPool keeps windows across drafts: a fresh one costs page faults
// and zeroing on each use, more than the copy into it. A draft keeps the
// windows of a commit ahead for its next commit (Draft.wins), as its log
// keeps its blocks: a pool drops its items at garbage collections, and a
// handle commits ahead every 16 MiB. A full commit or Discard returns
// them.
var windowPool = sync.Pool{New: func() any { return new([windowBytes]byte) }}

func (s *draftSource) view(ctx context.Context, off, n, end int64) ([]byte, error) {
	if off >= s.winOff && off+n <= s.winOff+int64(len(s.win)) {
		return s.win[off-s.winOff:][:n], nil
	}
	if l := &s.d.log; l.flat != nil {
		// Written bytes in a flat log are served where they are, up to
		// the end of their span: the log does not change before the
		// commit ends.
		spans := s.d.spans
		if i := sort.Search(len(spans), func(i int) bool { return spans[i].end() > off }); i < len(spans) && spans[i].off <= off && off+n <= spans[i].end() {
			sp := spans[i]
			lo := sp.logOff + off - sp.off
			s.win, s.winOff = l.flat[lo:lo+min(sp.end(), max(end, off+n))-off], off
			return s.win[:n], nil
		}
	}
	var win []byte
	size := s.d.reach(off+n, min(end, off+max(n, windowBytes))) - off
	switch {
	case size <= smallWindow:
		// A small draft (or tail): a window of its size costs less than
		// a pooled 16 MiB one, which a garbage collection may have
		// dropped, to be allocated and zeroed again.
		win = make([]byte, size)
	case size <= windowBytes:
		var w *[windowBytes]byte
		if k := len(s.d.wins); k > 0 {
			w, s.d.wins = s.d.wins[k-1], s.d.wins[:k-1]
		} else {
			w = windowPool.Get().(*[windowBytes]byte)
		}
		s.used = append(s.used, w)
		win = w[:size]
	default:
		win = make([]byte, size) // a chunk past windowBytes (large Params)
	}
	kept := 0
	if off >= s.winOff && off < s.winOff+int64(len(s.win)) {
		kept = copy(win, s.win[off-s.winOff:])
	}
	if err := s.d.readAt(ctx, win[kept:], off+int64(kept), false); err != nil {
		return nil, err
	}
	s.win, s.winOff = win, off
	return win[:n], nil
}

func (s *draftSource) reach(off, n, limit int64) int64 { return s.d.reach(off+n, limit) }

func (s *draftSource) done() {
	s.d.wins = append(s.d.wins, s.used...)
	s.used, s.win = nil, nil
}

// reach returns how far past e, up to limit, the draft's bytes cost no
// chunk fetch beyond the one that byte e-1 needs: written bytes, zeros,
// base holes, and the rest of the base chunk holding byte e-1.
func (d *Draft) reach(e, limit int64) int64 {
	if e > 0 && e-1 < d.baseLimit && !d.written(e-1) {
		if i, start := d.baseExtent(e - 1); !d.base.Extents[i].Hash.IsZero() {
			e = min(start+d.base.Extents[i].Size, d.baseLimit)
		}
	}
	for e < limit {
		i := sort.Search(len(d.spans), func(i int) bool { return d.spans[i].end() > e })
		switch {
		case i < len(d.spans) && d.spans[i].off <= e:
			e = d.spans[i].end()
		case e >= d.baseLimit:
			return limit
		default:
			j, start := d.baseExtent(e)
			if !d.base.Extents[j].Hash.IsZero() {
				return e
			}
			e = min(start+d.base.Extents[j].Size, d.baseLimit)
			if i < len(d.spans) {
				e = min(e, d.spans[i].off)
			}
		}
	}
	return limit
}

// written reports whether a write covers byte x.
func (d *Draft) written(x int64) bool {
	i := sort.Search(len(d.spans), func(i int) bool { return d.spans[i].end() > x })
	return i < len(d.spans) && d.spans[i].off <= x
}

// baseExtent returns the index and offset of the base extent holding byte
// x, which must be below baseLimit.
func (d *Draft) baseExtent(x int64) (int, int64) {
	if d.baseEnds == nil {
		d.baseEnds = make([]int64, len(d.base.Extents))
		end := int64(0)
		for i, e := range d.base.Extents {
			end += e.Size
			d.baseEnds[i] = end
		}
	}
	i := sort.Search(len(d.baseEnds), func(i int) bool { return d.baseEnds[i] > x })
	return i, d.baseEnds[i] - d.base.Extents[i].Size
}
