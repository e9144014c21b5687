package httpapi

import (
	"context"
	"errors"
	"net"
	"net/http"
	"runtime"
	"slices"
	"sync"
	"syscall"
	"time"

	"github.com/forkspace/forkspace/feed"
)

// Shared writers of event streams (docs/decisions/027-shared-stream-writers.md).
//
// A workspace's event stream on a plain HTTP/1.1 connection is written by
// the workspace's writers, a few goroutines that wake once per event and
// write its chunk to every idle stream of the workspace with a write that
// never waits. A thousand subscribers then cost a thousand write calls
// per event, not a thousand goroutines woken to make them. A stream the
// writers cannot serve at once — its socket buffer full, its cursor
// behind what the feed holds in memory, its handler busy with a heartbeat
// — is handed to its own handler, which catches up with writes that wait
// (each bounded by Options.BodyIdle) and gives the stream back. A slow
// subscriber therefore delays nobody, as with a goroutine per stream.
//
// Streams over TLS or HTTP/2, store-wide streams (whose scope may need a
// catalog read per event) and finite streams keep a goroutine each
// (Server.send).

// connKey is the context key of a request's connection (HTTPServer's
// ConnContext).
type connKey struct{}

// withConn is HTTPServer's ConnContext.
func withConn(ctx context.Context, c net.Conn) context.Context {
	return context.WithValue(ctx, connKey{}, c)
}

// directPart is how many streams one writer takes before another is
// worth starting.
const directPart = 64

// fanout keeps the writers of the workspaces that have direct streams.
type fanout struct {
	mu     sync.Mutex
	groups map[string]*writers // by workspace ID
}

// writers write the events of one workspace to its direct streams.
type writers struct {
	fan  *fanout
	feed *feed.Feed
	ws   string
	poke chan struct{} // the set of streams changed

	mu      sync.Mutex
	streams []*direct
	scratch []*direct // the writers' copy of streams
}

// direct is a stream written by its workspace's writers while it is
// idle, and by its handler when they hand it over.
type direct struct {
	ls     *localStream
	ctx    context.Context
	conn   net.Conn
	raw    syscall.RawConn
	frames *frames
	kick   chan struct{} // the handler has work (capacity 1)

	mu      sync.Mutex // one writer at a time, and the fields below
	pending []byte     // what the writers could not write: the handler writes it first
	err     error      // why the writers gave the stream up (or it ended)
	batch   []Event
	out     []byte
}

// direct returns es as a stream for the shared writers, or nil when it
// is not one they can write: not a workspace's stream of this store,
// finite, or not on a plain HTTP/1.1 connection (whose response is
// chunked, so each event goes out as one chunk).
func (s *Server) direct(r *http.Request, es EventStream) *direct {
	ls, ok := es.(*localStream)
	if !ok || ls.wsID == "" || ls.finite || r.ProtoMajor != 1 || r.ProtoMinor < 1 {
		return nil
	}
	conn, _ := r.Context().Value(connKey{}).(net.Conn)
	switch conn.(type) {
	case *net.TCPConn, *net.UnixConn:
	default:
		return nil // TLS, or a wrapper whose bytes are not the socket's
	}
	raw, err := conn.(syscall.Conn).SyscallConn()
	if err != nil {
		return nil
	}
	return &direct{ls: ls, ctx: r.Context(), conn: conn, raw: raw, frames: &s.frames, kick: make(chan struct{}, 1)}
}

// join adds d to the writers of its workspace, starting them if needed.
func (f *fanout) join(d *direct) *writers {
	f.mu.Lock()
	defer f.mu.Unlock()
	g := f.groups[d.ls.wsID]
	if g == nil {
		if f.groups == nil {
			f.groups = map[string]*writers{}
		}
		g = &writers{fan: f, feed: d.ls.f, ws: d.ls.wsID, poke: make(chan struct{}, 1)}
		f.groups[g.ws] = g
		go g.run()
	}
	g.mu.Lock()
	g.streams = append(g.streams, d)
	g.mu.Unlock()
	return g
}

// leave removes d; the writers stop once they have no stream.
func (g *writers) leave(d *direct) {
	g.mu.Lock()
	if i := slices.Index(g.streams, d); i >= 0 {
		g.streams = slices.Delete(g.streams, i, i+1)
	}
	empty := len(g.streams) == 0
	g.mu.Unlock()
	if empty {
		signal(g.poke)
	}
}

// retire removes g from the fanout if it has no stream left.
func (f *fanout) retire(g *writers) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.streams) > 0 {
		return false
	}
	delete(f.groups, g.ws)
	return true
}

// run writes each event of the workspace to its streams. The channel of
// the next event is taken before the streams are read, so an event
// published meanwhile is not missed.
func (g *writers) run() {
	for {
		next := g.feed.Changed(g.ws)
		g.mu.Lock()
		streams := append(g.scratch[:0], g.streams...)
		g.mu.Unlock()
		if len(streams) == 0 && g.fan.retire(g) {
			return
		}
		push(streams)
		clear(streams)
		g.scratch = streams
		select {
		case <-next:
		case <-g.poke:
		}
	}
}

// push writes what each stream has, spread over as many goroutines as
// there are processors (at least directPart streams each).
func push(streams []*direct) {
	parts := min(runtime.GOMAXPROCS(0), (len(streams)+directPart-1)/directPart)
	if parts <= 1 {
		for _, d := range streams {
			d.push()
		}
		return
	}
	per := (len(streams) + parts - 1) / parts
	var wg sync.WaitGroup
	for i := 0; i < len(streams); i += per {
		part := streams[i:min(i+per, len(streams))]
		wg.Go(func() {
			for _, d := range part {
				d.push()
			}
		})
	}
	wg.Wait()
}

// push writes the events the feed holds for d without waiting, or hands
// the stream to its handler.
func (d *direct) push() {
	if !d.mu.TryLock() {
		signal(d.kick) // the handler is writing: it reads on after
		return
	}
	defer d.mu.Unlock()
	if len(d.pending) > 0 || d.err != nil || d.ctx.Err() != nil {
		return // the handler has it
	}
	es, ok := d.ls.ready(d.ctx, d.batch[:0])
	d.batch = es
	if !ok {
		signal(d.kick) // behind the feed's memory: the handler reads the log
		return
	}
	if len(es) == 0 {
		return
	}
	b, err := d.encode(es)
	clear(d.batch)
	if err == nil {
		var n int
		if n, err = writeNow(d.raw, b); err == nil && n < len(b) {
			d.pending = append(d.pending, b[n:]...)
		}
	}
	if err != nil {
		d.err = err
	}
	if err != nil || len(d.pending) > 0 {
		signal(d.kick)
	}
}

// encode returns the chunks of es: the shared one of a single event, or
// d.out.
func (d *direct) encode(es []Event) ([]byte, error) {
	if len(es) == 1 {
		return d.frames.chunked(es[0])
	}
	d.out = d.out[:0]
	for _, e := range es {
		c, err := d.frames.chunked(e)
		if err != nil {
			return nil, err
		}
		d.out = append(d.out, c...)
	}
	return d.out, nil
}

// streamDirect serves d from the shared writers until the client goes or
// the stream fails (its error is the last event). The handler catches up
// when the writers hand the stream over, and sends the heartbeats.
func (s *Server) streamDirect(ctx context.Context, d *direct) error {
	// The writers' writes never wait; the handler's bound each of theirs.
	d.conn.SetWriteDeadline(time.Time{})
	g := s.fan.join(d)
	var last []byte // the error event that ends the stream
	defer func() {
		g.leave(d)
		d.close(last, s.opts.BodyIdle)
	}()
	tick := time.NewTicker(s.opts.Heartbeat)
	defer tick.Stop()
	beat := false
	for {
		d.mu.Lock()
		err := d.catchUp(beat, s.opts.BodyIdle)
		d.mu.Unlock()
		beat = false
		switch {
		case ctx.Err() != nil || errors.Is(err, errClientGone):
			return nil
		case err != nil:
			last = chunk(nil, errorFrame(err))
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-d.kick:
		case <-tick.C:
			beat = true
		}
	}
}

// catchUp writes what the writers left, a heartbeat if beat, and then
// every event there is, reading the log if need be. The caller holds d.mu.
func (d *direct) catchUp(beat bool, idle time.Duration) error {
	if d.err != nil {
		return errClientGone
	}
	if beat {
		d.pending = chunk(d.pending, heartbeat)
	}
	for {
		if len(d.pending) > 0 {
			if err := d.write(d.pending, idle); err != nil {
				return err
			}
			d.pending = d.pending[:0]
		}
		es, _, err := d.ls.poll(d.ctx, d.batch[:0])
		d.batch = es
		if err != nil || len(es) == 0 {
			return err
		}
		b, err := d.encode(es)
		clear(d.batch)
		if err != nil {
			return err
		}
		d.pending = append(d.pending, b...)
	}
}

// close ends the stream for the writers, waiting out a write of theirs,
// and then writes last, if any: nothing is written to the connection
// after, but the response's end.
func (d *direct) close(last []byte, idle time.Duration) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.err = errClientGone
	if last != nil {
		d.write(last, idle)
	}
}

// write writes b, waiting at most idle for it to go.
func (d *direct) write(b []byte, idle time.Duration) error {
	d.conn.SetWriteDeadline(time.Now().Add(idle))
	defer d.conn.SetWriteDeadline(time.Time{})
	if _, err := d.conn.Write(b); err != nil {
		return errClientGone
	}
	return nil
}

// signal wakes ch's reader without waiting (ch has capacity 1).
func signal(ch chan struct{}) {
	select {
	case ch <- struct{}{}:
	default:
	}
}

// writeNow writes what the socket takes of b at once, never waiting: 0
// when its buffer is full.
func writeNow(raw syscall.RawConn, b []byte) (int, error) {
	var n int
	var errno error
	err := raw.Write(func(fd uintptr) bool {
		n, errno = syscall.Write(int(fd), b)
		return true
	})
	switch {
	case err != nil:
		return 0, err
	case errno == syscall.EAGAIN || errno == syscall.EINTR:
		return 0, nil
	case errno != nil:
		return 0, errno
	}
	return n, nil
}
