package feed

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"log/slog"
	"sort"
	"strings"
	"sync"

	"github.com/forkspace/forkspace/audit"
)

// ErrTooOld is a subscription from a sequence number the feed can no
// longer continue from: entries after it were pruned, or it is past the
// newest entry (another store, or a database restored from a backup).
// The client lists what it shows again and subscribes from the current
// sequence number.
var ErrTooOld = errors.New("too old: the change feed cannot continue from this sequence number; list again and resubscribe")

// Event is one change: an entry of the audit log. Its Seq orders it
// store-wide.
type Event = audit.Entry

// Defaults of Options.
const (
	DefaultRing = 4096
	DefaultPage = 256
)

// Options configure a Feed.
type Options struct {
	// Ring is how many of the newest events are kept in memory (default
	// DefaultRing); subscribers further behind read the database.
	Ring int
	// Page bounds the events one read of the database returns (default
	// DefaultPage).
	Page   int
	Logger *slog.Logger
}

// Feed publishes the entries of an audit log as they are recorded. It is
// safe for concurrent use.
type Feed struct {
	log  *audit.Log
	opts Options
	lg   *slog.Logger

	fill sync.Mutex // serialises appends to the ring

	mu      sync.RWMutex
	ring    []Event // circular, in Seq order: ring[(start+i)%len]
	start   int
	n       int
	covered int64 // the ring holds every entry with covered < Seq <= last
	last    int64
	wake    chan struct{} // closed and replaced when last moves

	// wakeWS holds the channels of the waiting cursors that follow one
	// workspace, each closed and removed when an event of its workspace
	// is published: an event wakes its workspace's subscribers and the
	// store-wide ones, not a thousand subscribers of other workspaces.
	// Taken under mu (read or write), never the other way round.
	wmu    sync.Mutex
	wakeWS map[string]chan struct{}
}

// New returns the feed of log: it hears of every entry log records from
// now on (audit.Log.OnRecord).
func New(ctx context.Context, log *audit.Log, opts Options) (*Feed, error) {
	if opts.Ring <= 0 {
		opts.Ring = DefaultRing
	}
	if opts.Page <= 0 {
		opts.Page = DefaultPage
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	_, newest, err := log.Bounds(ctx)
	if err != nil {
		return nil, fmt.Errorf("change feed: %w", err)
	}
	f := &Feed{log: log, opts: opts, lg: opts.Logger.With("component", "feed"),
		ring: make([]Event, opts.Ring), covered: newest, last: newest, wake: make(chan struct{}),
		wakeWS: map[string]chan struct{}{}}
	log.OnRecord(f.recorded)
	return f, nil
}

// Last returns the newest sequence number published.
func (f *Feed) Last() int64 {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.last
}

// recorded publishes e, committed. Entries of concurrent writers may come
// out of order, and entries appended without audit.Log not at all; when e
// is not the next one, everything committed after the last published
// entry is read from the database: every Seq below a committed one is
// committed (or never will be), so nothing is skipped.
func (f *Feed) recorded(e Event) {
	f.fill.Lock()
	defer f.fill.Unlock()
	last := f.Last()
	if e.Seq <= last {
		return
	}
	if e.Seq == last+1 {
		f.publish([]Event{e}, false)
		return
	}
	if !f.catchUp(context.Background(), last, e.Seq) {
		// The gap's events, read by the subscribers, are of workspaces
		// unknown here: every subscriber is woken.
		f.publish([]Event{e}, true)
	}
}

// Heard tells the feed that another process sharing the store committed
// entries up to seq (0: perhaps some): it publishes, from the database,
// every committed entry it has not.
func (f *Feed) Heard(ctx context.Context, seq int64) {
	f.fill.Lock()
	defer f.fill.Unlock()
	if last := f.Last(); seq == 0 || seq > last {
		f.catchUp(ctx, last, seq)
	}
}

// catchUp publishes what the database holds after last, which includes
// seq (0: nothing known), and reports whether it could read it; the
// caller holds fill.
func (f *Feed) catchUp(ctx context.Context, last, seq int64) bool {
	es, _, err := f.log.Forward(ctx, audit.Filter{After: last})
	if err != nil {
		f.lg.Warn("read the change feed's gap", "after", last, "err", err)
		if seq > last {
			// Subscribers behind seq read the gap from the database.
			f.mu.Lock()
			f.n, f.covered = 0, seq-1
			f.mu.Unlock()
		}
		return false
	}
	f.publish(es, false)
	return true
}

// publish appends es (in Seq order, after last) and wakes the waiters:
// the store-wide ones and those of es's workspaces, or all of them.
func (f *Feed) publish(es []Event, all bool) {
	if len(es) == 0 {
		return
	}
	f.mu.Lock()
	for _, e := range es {
		if e.Seq <= f.last {
			continue
		}
		if f.n == len(f.ring) {
			f.covered = f.ring[f.start].Seq
			f.ring[f.start] = Event{}
			f.start = (f.start + 1) % len(f.ring)
			f.n--
		}
		f.ring[(f.start+f.n)%len(f.ring)] = e
		f.n++
		f.last = e.Seq
	}
	wake := f.wake
	f.wake = make(chan struct{})
	var woken []chan struct{}
	f.wmu.Lock()
	if all {
		for _, ch := range f.wakeWS {
			woken = append(woken, ch)
		}
		clear(f.wakeWS)
	}
	for _, e := range es {
		if ch, ok := f.wakeWS[e.WorkspaceID]; ok {
			woken = append(woken, ch)
			delete(f.wakeWS, e.WorkspaceID)
		}
	}
	f.wmu.Unlock()
	f.mu.Unlock()
	// Woken after the lock is released: a thousand waiters woken under
	// it would run into it and wait again.
	close(wake)
	for _, ch := range woken {
		close(ch)
	}
}

// Changed returns a channel closed at the next publication of an event
// of workspace ws ("" any workspace). A subscriber that takes it before
// reading what its cursors hold misses nothing: whatever is published
// after closes it.
func (f *Feed) Changed(ws string) <-chan struct{} {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.wakeFor(ws)
}

// wakeFor returns the channel closed when a cursor of workspace ws ("" a
// store-wide one) may have more. The caller holds mu's read lock.
func (f *Feed) wakeFor(ws string) <-chan struct{} {
	if ws == "" {
		return f.wake
	}
	f.wmu.Lock()
	defer f.wmu.Unlock()
	ch := f.wakeWS[ws]
	if ch == nil {
		ch = make(chan struct{})
		f.wakeWS[ws] = ch
	}
	return ch
}

// Filter selects the events of a subscription.
type Filter struct {
	// WorkspaceID keeps one workspace's events ("" all).
	WorkspaceID string
	// Path, when set, keeps the events that touch this workspace path
	// (Touches); "." or "" keeps every event, those that changed nothing
	// included.
	Path string
	// Match, when set, keeps only the events it accepts (a token's
	// scope). It is called outside the feed's locks and may be slow.
	Match func(Event) bool
}

// near reports whether flt keeps e by workspace and path (cheap: checked
// under the ring's lock; Match is called outside it).
func (flt Filter) near(e *Event) bool {
	return (flt.WorkspaceID == "" || e.WorkspaceID == flt.WorkspaceID) &&
		(flt.Path == "" || flt.Path == "." || Touches(*e, flt.Path))
}

// match applies flt.Match to es[from:] in place.
func (flt Filter) match(es []Event, from int) []Event {
	if flt.Match == nil {
		return es
	}
	kept := es[:from]
	for _, e := range es[from:] {
		if flt.Match(e) {
			kept = append(kept, e)
		}
	}
	clear(es[len(kept):])
	return kept
}

// Touches reports whether e changed the workspace path p: p itself,
// something beneath it, or a directory above it (a rename or removal of
// a parent moves p; "." is the whole tree).
func Touches(e Event, p string) bool {
	for _, c := range e.Changed {
		if related(c, p) {
			return true
		}
	}
	return false
}

// related reports whether one of paths a and b is the other or lies
// beneath it.
func related(a, b string) bool {
	if a == "." || b == "." || a == b {
		return true
	}
	if len(a) > len(b) {
		a, b = b, a
	}
	return strings.HasPrefix(b, a) && b[len(a)] == '/'
}

// Cursor is one subscriber's position in the feed. A Cursor is used by
// one goroutine.
type Cursor struct {
	f   *Feed
	pos int64
	flt Filter
}

// Subscribe returns a cursor delivering the events after since that flt
// keeps, in Seq order. since 0 is the start of the log; Last() is now.
// A since the feed cannot continue from is ErrTooOld.
func (f *Feed) Subscribe(ctx context.Context, since int64, flt Filter) (*Cursor, error) {
	pruned, newest, err := f.log.Bounds(ctx)
	if err != nil {
		return nil, fmt.Errorf("subscribe to the change feed: %w", err)
	}
	if since < 0 || since < pruned || since > max(newest, f.Last()) {
		return nil, fmt.Errorf("subscribe to the change feed after %d (kept: %d to %d): %w", since, pruned, max(newest, f.Last()), ErrTooOld)
	}
	return &Cursor{f: f, pos: since, flt: flt}, nil
}

// Seq returns the sequence number of the last event the cursor went
// past (delivered or filtered out).
func (c *Cursor) Seq() int64 { return c.pos }

// Poll returns the next events (at most a page), without waiting. When
// there are none it returns a channel closed once there may be more.
// It fails with ErrTooOld when the cursor fell behind a pruning.
func (c *Cursor) Poll(ctx context.Context) ([]Event, <-chan struct{}, error) {
	return c.PollAppend(ctx, nil)
}

// PollReady is PollAppend for a writer that must not wait on the log:
// it appends what the ring holds after the cursor (nothing when the
// cursor is caught up) and reports false, appending nothing, when the
// cursor has fallen behind the ring, where only PollAppend goes on.
func (c *Cursor) PollReady(dst []Event) ([]Event, bool) {
	f := c.f
	n := len(dst)
	for {
		f.mu.RLock()
		if c.pos >= f.last {
			f.mu.RUnlock()
			return dst, true
		}
		if c.pos < f.covered {
			f.mu.RUnlock()
			return dst, false
		}
		dst = c.fromRing(dst)
		f.mu.RUnlock()
		if dst = c.flt.match(dst, n); len(dst) > n {
			return dst, true
		}
	}
}

// PollAppend is Poll appending the events to dst and returning the
// extended slice (dst itself, with its length, when there are none): a
// subscriber that passes the same buffer each time allocates nothing
// for events in memory.
func (c *Cursor) PollAppend(ctx context.Context, dst []Event) ([]Event, <-chan struct{}, error) {
	f := c.f
	n := len(dst)
	for {
		f.mu.RLock()
		last, covered := f.last, f.covered
		if c.pos >= last {
			wake := f.wakeFor(c.flt.WorkspaceID)
			f.mu.RUnlock()
			return dst, wake, nil
		}
		if c.pos >= covered {
			dst = c.fromRing(dst)
			f.mu.RUnlock()
			if dst = c.flt.match(dst, n); len(dst) > n {
				return dst, nil, nil
			}
			continue
		}
		f.mu.RUnlock()
		es, pruned, err := f.log.Forward(ctx, audit.Filter{After: c.pos, WorkspaceID: c.flt.WorkspaceID, Limit: f.opts.Page})
		if err != nil {
			return dst, nil, fmt.Errorf("read the change feed: %w", err)
		}
		if pruned > c.pos {
			return dst, nil, fmt.Errorf("read the change feed after %d (pruned to %d): %w", c.pos, pruned, ErrTooOld)
		}
		// Everything up to last was committed before the read, so a short
		// page means none of it is left (and it may hold later ones).
		next := last
		if len(es) == f.opts.Page {
			next = 0
		}
		if len(es) > 0 {
			next = max(next, es[len(es)-1].Seq)
		}
		for i := range es {
			if c.flt.near(&es[i]) {
				dst = append(dst, es[i])
			}
		}
		dst = c.flt.match(dst, n)
		c.pos = max(next, c.pos)
		if len(dst) > n {
			return dst, nil, nil
		}
	}
}

// fromRing appends to dst the events after pos that are near the filter
// (at most a page) and moves pos past what it looked at. The caller
// holds f.mu's read lock and has checked covered <= pos < last.
func (c *Cursor) fromRing(dst []Event) []Event {
	f := c.f
	at := func(i int) *Event { return &f.ring[(f.start+i)%len(f.ring)] }
	i := sort.Search(f.n, func(i int) bool { return at(i).Seq > c.pos })
	for n := len(dst); i < f.n && len(dst)-n < f.opts.Page; i++ {
		e := at(i)
		c.pos = e.Seq
		if c.flt.near(e) {
			dst = append(dst, *e)
		}
	}
	return dst
}

// Next returns the next events, waiting for some until ctx is done (its
// error then).
func (c *Cursor) Next(ctx context.Context) ([]Event, error) {
	for {
		es, wake, err := c.Poll(ctx)
		if err != nil || len(es) > 0 {
			return es, err
		}
		select {
		case <-wake:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// Follow yields the events after since that flt keeps, in Seq order,
// waiting for new ones until ctx is done (then it ends). A failure is
// yielded once, last.
func (f *Feed) Follow(ctx context.Context, since int64, flt Filter) iter.Seq2[Event, error] {
	return func(yield func(Event, error) bool) {
		c, err := f.Subscribe(ctx, since, flt)
		if err != nil {
			yield(Event{}, err)
			return
		}
		for {
			es, err := c.Next(ctx)
			if ctx.Err() != nil {
				return
			}
			if err != nil {
				yield(Event{}, err)
				return
			}
			for _, e := range es {
				if !yield(e, nil) {
					return
				}
			}
		}
	}
}
