package feed_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/forkspace/forkspace/audit"
	"github.com/forkspace/forkspace/feed"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/meta/memmeta"
	"github.com/forkspace/forkspace/meta/sqlitemeta"
)

func openSQLite(t *testing.T, path string) meta.Store {
	t.Helper()
	s, err := sqlitemeta.Open(t.Context(), path, sqlitemeta.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

var stores = map[string]func(t *testing.T) meta.Store{
	"sqlite": func(t *testing.T) meta.Store {
		s := openSQLite(t, filepath.Join(t.TempDir(), "meta.db"))
		t.Cleanup(func() { s.Close() })
		return s
	},
	"memory": func(*testing.T) meta.Store { return memmeta.New() },
}

func newFeed(t *testing.T, log *audit.Log, opts feed.Options) *feed.Feed {
	t.Helper()
	f, err := feed.New(t.Context(), log, opts)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func record(t testing.TB, log *audit.Log, ws string) {
	t.Helper()
	if err := log.Record(context.Background(), audit.Entry{WorkspaceID: ws, Tool: "write", Changed: []string{"f"}}); err != nil {
		t.Error(err)
	}
}

// collect reads c until it went past seq.
func collect(ctx context.Context, c *feed.Cursor, seq int64) ([]int64, error) {
	var got []int64
	for c.Seq() < seq {
		es, err := c.Next(ctx)
		if err != nil {
			return got, err
		}
		for _, e := range es {
			got = append(got, e.Seq)
		}
	}
	return got, nil
}

// collectLive reads c as events come until stop is closed and c went
// past everything published by then; with reuse it polls into one
// buffer (PollAppend), which the previous batch is cleared from.
func collectLive(ctx context.Context, c *feed.Cursor, stop <-chan struct{}, reuse bool) ([]int64, error) {
	var got []int64
	var buf []feed.Event
	stopped := false
	for {
		var (
			es   []feed.Event
			wake <-chan struct{}
			err  error
		)
		if reuse {
			clear(buf[:cap(buf)])
			buf, wake, err = c.PollAppend(ctx, buf[:0])
			es = buf
		} else {
			es, wake, err = c.Poll(ctx)
		}
		if err != nil {
			return got, err
		}
		for _, e := range es {
			got = append(got, e.Seq)
		}
		if len(es) > 0 {
			continue
		}
		if stopped {
			return got, nil
		}
		select {
		case <-wake:
		case <-stop:
			stopped = true
		}
	}
}

// want returns the Seqs of the log's entries after since that ws keeps.
func want(t *testing.T, log *audit.Log, since int64, ws string) []int64 {
	t.Helper()
	es, _, err := log.Forward(t.Context(), audit.Filter{After: since, WorkspaceID: ws})
	if err != nil {
		t.Fatal(err)
	}
	var out []int64
	for _, e := range es {
		out = append(out, e.Seq)
	}
	return out
}

// TestFeedMatchesLog: concurrent writers, entries appended behind the
// feed's back, subscribers of every kind (all, one workspace, from the
// start, from the middle, slow ones that fall out of a tiny ring): each
// receives exactly the log's entries it keeps, in order.
func TestFeedMatchesLog(t *testing.T) {
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			m := open(t)
			log := audit.NewLog(m)
			for range 5 {
				record(t, log, "w0")
			}
			f := newFeed(t, log, feed.Options{Ring: 8, Page: 3})
			type sub struct {
				ws    string
				since int64
				slow  bool
				c     *feed.Cursor
			}
			var subs []*sub
			type result struct {
				got []int64
				err error
			}
			stop := make(chan struct{})
			results := make([]chan result, 12)
			for i := range 12 {
				s := &sub{since: int64(i % 6), slow: i%3 == 0}
				if i%2 == 1 {
					s.ws = fmt.Sprintf("w%d", i%3)
				}
				c, err := f.Subscribe(t.Context(), s.since, feed.Filter{WorkspaceID: s.ws})
				if err != nil {
					t.Fatal(err)
				}
				s.c = c
				subs = append(subs, s)
				results[i] = make(chan result, 1)
				if !s.slow {
					// Reads as the writers write.
					go func() {
						got, err := collectLive(t.Context(), c, stop, i%4 == 1)
						results[i] <- result{got, err}
					}()
				}
			}
			const writers, each = 4, 60
			var wg sync.WaitGroup
			for w := range writers {
				wg.Go(func() {
					r := rand.New(rand.NewPCG(uint64(w), 1))
					for range each {
						ws := fmt.Sprintf("w%d", r.IntN(3))
						if r.IntN(10) == 0 {
							// Appended without audit.Log: the feed reads it
							// with the next recorded entry.
							err := m.Update(context.Background(), func(tx meta.Tx) error {
								return tx.AppendAudit(&meta.AuditEntry{WorkspaceID: ws, Tool: "direct"})
							})
							if err != nil {
								t.Error(err)
							}
							continue
						}
						record(t, log, ws)
					}
				})
			}
			wg.Wait()
			record(t, log, "w0") // the last one goes through the log
			last := f.Last()
			if got := want(t, log, 0, ""); last != got[len(got)-1] {
				t.Fatalf("Last = %d, newest entry %d", last, got[len(got)-1])
			}
			close(stop)
			for i, s := range subs {
				var r result
				if s.slow {
					// A slow subscriber starts reading only now, far
					// behind the ring.
					r.got, r.err = collect(t.Context(), s.c, last)
				} else {
					r = <-results[i]
				}
				got, err := r.got, r.err
				if err != nil {
					t.Fatalf("subscriber %d: %v", i, err)
				}
				if w := want(t, log, s.since, s.ws); !slices.Equal(got, w) {
					t.Errorf("subscriber %d (ws %q since %d): got %v\nwant %v", i, s.ws, s.since, got, w)
				}
			}
		})
	}
}

// TestPollAppend: PollAppend appends the events Poll would return after
// what dst holds, filters only what it appends, and returns dst as it
// was when there is nothing new, from the ring and from the database.
func TestPollAppend(t *testing.T) {
	log := audit.NewLog(memmeta.New())
	for range 3 {
		record(t, log, "w") // before the feed: read from the database
	}
	f := newFeed(t, log, feed.Options{})
	c, err := f.Subscribe(t.Context(), 0, feed.Filter{Match: func(e feed.Event) bool { return e.Seq != 2 && e.Seq != 5 }})
	if err != nil {
		t.Fatal(err)
	}
	prefix := feed.Event{Tool: "mine", Seq: 2} // the filter would drop it
	seqs := func(es []feed.Event) []int64 {
		var out []int64
		for _, e := range es {
			out = append(out, e.Seq)
		}
		return out
	}
	buf := make([]feed.Event, 1, 1) // full: the first append grows it
	buf[0] = prefix
	buf, wake, err := c.PollAppend(t.Context(), buf)
	if err != nil || wake != nil || !slices.Equal(seqs(buf), []int64{2, 1, 3}) || buf[0].Tool != "mine" {
		t.Fatalf("from the database: %v %v, wake %v, err %v", seqs(buf), buf[0].Tool, wake, err)
	}
	buf, wake, err = c.PollAppend(t.Context(), buf[:1])
	if err != nil || wake == nil || !slices.Equal(seqs(buf), []int64{2}) {
		t.Fatalf("nothing new: %v, wake %v, err %v", seqs(buf), wake, err)
	}
	for range 3 {
		record(t, log, "w") // 4 to 6, in the ring
	}
	<-wake
	buf, _, err = c.PollAppend(t.Context(), buf[:1])
	if err != nil || !slices.Equal(seqs(buf), []int64{2, 4, 6}) || buf[0].Tool != "mine" {
		t.Fatalf("from the ring: %v, err %v", seqs(buf), err)
	}
	if c.Seq() != 6 {
		t.Errorf("Seq %d after the ring, want 6", c.Seq())
	}
}

// TestPollReady: PollReady reads the ring and never the log: a cursor
// behind the ring gets false and nothing, and goes on with PollAppend; a
// caught-up cursor gets true and nothing. Changed is closed by the next
// event of its workspace, not another's.
func TestPollReady(t *testing.T) {
	log := audit.NewLog(memmeta.New())
	for range 3 {
		record(t, log, "w") // before the feed: only in the database
	}
	f := newFeed(t, log, feed.Options{Ring: 4})
	c, err := f.Subscribe(t.Context(), 0, feed.Filter{WorkspaceID: "w"})
	if err != nil {
		t.Fatal(err)
	}
	if es, ok := c.PollReady(nil); ok || len(es) != 0 || c.Seq() != 0 {
		t.Fatalf("behind the ring: %d events, ok %v, Seq %d", len(es), ok, c.Seq())
	}
	es, _, err := c.PollAppend(t.Context(), nil)
	if err != nil || len(es) != 3 {
		t.Fatalf("PollAppend from the log: %d events, %v", len(es), err)
	}
	if es, ok := c.PollReady(nil); !ok || len(es) != 0 {
		t.Fatalf("caught up: %d events, ok %v", len(es), ok)
	}
	changed, other := f.Changed("w"), f.Changed("v")
	record(t, log, "v")
	record(t, log, "w")
	select {
	case <-changed:
	default:
		t.Fatal("an event of w did not close Changed(w)")
	}
	select {
	case <-other:
	default:
		t.Fatal("an event of v did not close Changed(v)")
	}
	es, ok := c.PollReady(es[:0])
	if !ok || len(es) != 1 || es[0].WorkspaceID != "w" || c.Seq() != f.Last() {
		t.Fatalf("from the ring: %v, ok %v, Seq %d of %d", es, ok, c.Seq(), f.Last())
	}
	for range 5 {
		record(t, log, "w") // the ring (4) no longer covers the cursor
	}
	if es, ok := c.PollReady(es[:0]); ok || len(es) != 0 {
		t.Fatalf("fallen behind the ring: %d events, ok %v", len(es), ok)
	}
}

// TestWakeByWorkspace: an event wakes the waiting cursors of its
// workspace and the store-wide ones, not those of other workspaces,
// which still go past it when they read.
func TestWakeByWorkspace(t *testing.T) {
	log := audit.NewLog(memmeta.New())
	f := newFeed(t, log, feed.Options{})
	poll := func(c *feed.Cursor) <-chan struct{} {
		t.Helper()
		es, wake, err := c.Poll(t.Context())
		if err != nil || len(es) > 0 || wake == nil {
			t.Fatalf("Poll: %d events, wake %v, err %v", len(es), wake, err)
		}
		return wake
	}
	woken := func(ch <-chan struct{}) bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	cursor := func(ws string) *feed.Cursor {
		c, err := f.Subscribe(t.Context(), f.Last(), feed.Filter{WorkspaceID: ws})
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	a1, a2, b, all := cursor("a"), cursor("a"), cursor("b"), cursor("")
	wa1, wa2, wb, wall := poll(a1), poll(a2), poll(b), poll(all)
	record(t, log, "b")
	if !woken(wb) || !woken(wall) || woken(wa1) || woken(wa2) {
		t.Fatalf("an event of b woke b %v, all %v, a %v %v", woken(wb), woken(wall), woken(wa1), woken(wa2))
	}
	// a's cursors go past b's event when they read, and wait again.
	if poll(a1) != wa1 || a1.Seq() != f.Last() {
		t.Errorf("a's cursor after b's event: Seq %d, want %d, or a new channel", a1.Seq(), f.Last())
	}
	record(t, log, "a")
	if !woken(wa1) || !woken(wa2) {
		t.Fatal("an event of a did not wake a's cursors")
	}
	for _, c := range []*feed.Cursor{a1, a2} {
		if es, _, err := c.Poll(t.Context()); err != nil || len(es) != 1 || es[0].WorkspaceID != "a" {
			t.Errorf("a's cursor: %v, %v", es, err)
		}
	}
	if es, _, err := b.Poll(t.Context()); err != nil || len(es) != 1 {
		t.Fatalf("b's cursor: %v, %v", es, err)
	}
	if wb2 := poll(b); woken(wb2) {
		t.Error("b's new channel is closed before an event of b")
	}
}

// TestFeedLive: a subscriber waiting in Next gets each entry as it is
// recorded, and Follow yields in order until its context ends.
func TestFeedLive(t *testing.T) {
	log := audit.NewLog(memmeta.New())
	f := newFeed(t, log, feed.Options{})
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	got := make(chan feed.Event)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for e, err := range f.Follow(ctx, 0, feed.Filter{Match: func(e feed.Event) bool { return e.Tool == "write" }}) {
			if err != nil {
				t.Error(err)
				return
			}
			got <- e
		}
	}()
	for i := range 3 {
		record(t, log, "w")
		if e := <-got; e.Seq != int64(i+1) {
			t.Errorf("event %d: Seq %d", i, e.Seq)
		}
	}
	cancel()
	<-done
}

// TestFeedReconnectAfterRestart: a subscriber that read part of the log,
// then lost the server, resubscribes from its last Seq to a new feed
// over the reopened database and receives exactly what it missed, in
// order.
func TestFeedReconnectAfterRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "meta.db")
	m := openSQLite(t, path)
	log := audit.NewLog(m)
	f := newFeed(t, log, feed.Options{})
	c, err := f.Subscribe(t.Context(), 0, feed.Filter{WorkspaceID: "a"})
	if err != nil {
		t.Fatal(err)
	}
	for _, ws := range []string{"a", "b", "a"} {
		record(t, log, ws)
	}
	seen, err := c.Next(t.Context())
	if err != nil || len(seen) != 2 {
		t.Fatalf("before the restart: %v, %v", seen, err)
	}
	lastSeen := seen[0].Seq // the client saw only the first
	for _, ws := range []string{"a", "b"} {
		record(t, log, ws)
	}
	m.Close()

	m = openSQLite(t, path)
	defer m.Close()
	log = audit.NewLog(m)
	f = newFeed(t, log, feed.Options{})
	record(t, log, "a")
	c, err = f.Subscribe(t.Context(), lastSeen, feed.Filter{WorkspaceID: "a"})
	if err != nil {
		t.Fatal(err)
	}
	got, err := collect(t.Context(), c, f.Last())
	if w := []int64{3, 4, 6}; err != nil || !slices.Equal(got, w) {
		t.Errorf("after the restart: %v, %v; want %v", got, err, w)
	}
}

// TestFeedTooOld: a start below the pruned mark or past the newest entry
// is ErrTooOld, and so is a cursor the pruning overtook; a start at the
// mark continues.
func TestFeedTooOld(t *testing.T) {
	for name, open := range stores {
		t.Run(name, func(t *testing.T) {
			log := audit.NewLog(open(t))
			for range 5 {
				record(t, log, "w")
			}
			f := newFeed(t, log, feed.Options{Ring: 2, Page: 2})
			behind, err := f.Subscribe(t.Context(), 1, feed.Filter{})
			if err != nil {
				t.Fatal(err)
			}
			through, err := log.Prune(t.Context(), time.Now().Add(time.Hour))
			if err != nil || through != 5 {
				t.Fatalf("Prune = %d, %v", through, err)
			}
			record(t, log, "w")
			for _, since := range []int64{0, 4, 7, -1} {
				if _, err := f.Subscribe(t.Context(), since, feed.Filter{}); !errors.Is(err, feed.ErrTooOld) {
					t.Errorf("Subscribe(%d) = %v, want ErrTooOld", since, err)
				}
			}
			if _, err := behind.Next(t.Context()); !errors.Is(err, feed.ErrTooOld) {
				t.Errorf("Next of a cursor behind the pruning = %v, want ErrTooOld", err)
			}
			c, err := f.Subscribe(t.Context(), 5, feed.Filter{})
			if err != nil {
				t.Fatal(err)
			}
			if got, err := collect(t.Context(), c, 6); err != nil || !slices.Equal(got, []int64{6}) {
				t.Errorf("from the mark: %v, %v", got, err)
			}
		})
	}
}

// TestSlowSubscriber: subscribers that never read hold nothing up:
// writers record far more than the ring holds, and an active subscriber
// receives every event meanwhile. (Were writers blocked, the test would
// hang.)
func TestSlowSubscriber(t *testing.T) {
	log := audit.NewLog(memmeta.New())
	f := newFeed(t, log, feed.Options{Ring: 16})
	for range 100 {
		if _, err := f.Subscribe(t.Context(), 0, feed.Filter{}); err != nil {
			t.Fatal(err)
		}
	}
	c, err := f.Subscribe(t.Context(), 0, feed.Filter{})
	if err != nil {
		t.Fatal(err)
	}
	const n = 2000
	got := make(chan []int64)
	go func() {
		s, err := collect(t.Context(), c, n)
		if err != nil {
			t.Error(err)
		}
		got <- s
	}()
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range n / 4 {
				record(t, log, "w")
			}
		})
	}
	wg.Wait()
	if s := <-got; len(s) != n || s[0] != 1 || s[n-1] != n {
		t.Errorf("active subscriber got %d events", len(s))
	}
}

func TestTouches(t *testing.T) {
	tests := []struct {
		changed []string
		p       string
		want    bool
	}{
		{[]string{"a/b"}, "a/b", true},
		{[]string{"a/b/c"}, "a/b", true},
		{[]string{"a"}, "a/b", true},
		{[]string{"."}, "a/b", true},
		{[]string{"x", "a/b"}, ".", true},
		{[]string{"a/bc"}, "a/b", false},
		{[]string{"a/b"}, "a/bc", false},
		{[]string{"b"}, "a", false},
		{nil, "a", false},
	}
	for _, tc := range tests {
		if got := feed.Touches(feed.Event{Changed: tc.changed}, tc.p); got != tc.want {
			t.Errorf("Touches(%q, %q) = %v, want %v", tc.changed, tc.p, got, tc.want)
		}
	}
}
