package httpapi_test

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/forkspace/forkspace/audit"
	"github.com/forkspace/forkspace/httpapi"
)

// subscribers is how many event streams BenchmarkFeedLatency holds open.
const subscribers = 1000

// BenchmarkFeedLatency: the time from the start of a write of a small
// file (through the library, so no client's request is timed) to its
// change event at each of 1,000 subscribers of the workspace's event
// stream on loopback, one write at a time (the next when every
// subscriber has the last). The baseline is a plain Go server fanning
// the same JSON out to as many Server-Sent Events streams from
// per-subscriber channels, with no store behind it. Both sets of
// subscribers stay connected and each iteration sends one event through
// each, in turn. The REST write's own duration is reported beside
// (rest-write-p50-ms…), and the time from its start to the event's
// publication by the feed (rest-publish-p50-ms…: an audit listener
// registered after the feed's). Each side's CPU time per event, server
// and subscribers together, is rest-cpu-ms and plain-cpu-ms. Run with
// -benchtime=100x.
func BenchmarkFeedLatency(b *testing.B) {
	e := newEnv(b)
	ctx := context.Background()
	_, err := e.client.CreateWorkspace(ctx, httpapi.CreateRequest{Name: "w"})
	must(b, err)
	hub := newPlainHub()
	plain := httptest.NewServer(hub)
	b.Cleanup(plain.Close)
	sides := []struct {
		name  string
		fl    *fanout
		write func(name string) error
	}{
		{"rest-", newFanout(b, e.url+"/v1/workspaces/w/events"), func(name string) error {
			_, err := e.local.Write(ctx, "w", name, strings.NewReader("x"), httpapi.WriteRequest{})
			return err
		}},
		{"plain-", newFanout(b, plain.URL), func(name string) error { hub.send(name); return nil }},
	}
	var writes, published latencies
	e.st.AuditLog().OnRecord(func(audit.Entry) { published.add(time.Since(sides[0].fl.sent)) })
	cpu := make([]time.Duration, len(sides))
	n := 0
	for i := 0; b.Loop(); i++ {
		for j, sd := range sides {
			name := fmt.Sprintf("e%d", i)
			start := cpuTime()
			sd.fl.expect(name)
			must(b, sd.write(name))
			if sd.name == "rest-" {
				writes.add(time.Since(sd.fl.sent))
			}
			sd.fl.wait(b)
			cpu[j] += cpuTime() - start
		}
		n++
	}
	for j, sd := range sides {
		sd.fl.lat.report(b, sd.name)
		b.ReportMetric(float64(cpu[j])/1e6/float64(n), sd.name+"cpu-ms")
	}
	writes.report(b, "rest-write-")
	published.report(b, "rest-publish-")
}

// fanout holds the subscribers of one stream and times each event's
// arrival at each of them.
type fanout struct {
	lat     latencies
	mu      sync.Mutex
	want    []byte    // what the expected event's data holds
	sent    time.Time // when its write began
	arrived sync.WaitGroup
	cancel  context.CancelFunc
}

// newFanout connects subscribers to the event stream at u and returns
// once each has its first event (the ready event, or the plain hub's).
func newFanout(b *testing.B, u string) *fanout {
	ctx, cancel := context.WithCancel(context.Background())
	fl := &fanout{cancel: cancel}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: subscribers}}
	var ready, done sync.WaitGroup
	ready.Add(subscribers)
	for range subscribers {
		done.Go(func() {
			req, _ := http.NewRequestWithContext(ctx, "GET", u, nil)
			resp, err := client.Do(req)
			if err != nil {
				ready.Done()
				b.Error(err)
				return
			}
			defer resp.Body.Close()
			fl.read(bufio.NewReader(resp.Body), ready.Done)
		})
	}
	ready.Wait()
	b.Cleanup(func() {
		cancel()
		done.Wait()
		client.CloseIdleConnections()
	})
	if b.Failed() {
		b.FailNow()
	}
	return fl
}

// read follows one stream: onReady after its first event, then each
// change event's arrival is timed.
func (fl *fanout) read(r *bufio.Reader, onReady func()) {
	first := true
	for {
		line, err := r.ReadSlice('\n')
		if err != nil {
			return
		}
		data, ok := bytes.CutPrefix(line, []byte("data: "))
		if !ok {
			continue
		}
		if first {
			first = false
			onReady()
			continue
		}
		now := time.Now()
		fl.mu.Lock()
		if bytes.Contains(data, fl.want) {
			fl.lat.add(now.Sub(fl.sent))
			fl.arrived.Done()
		}
		fl.mu.Unlock()
	}
}

// expect starts the timing of the event that names name.
func (fl *fanout) expect(name string) {
	fl.mu.Lock()
	defer fl.mu.Unlock()
	fl.want, fl.sent = fmt.Appendf(nil, `"changed":[%q]`, name), time.Now()
	fl.arrived.Add(subscribers)
}

// wait returns when every subscriber has the expected event.
func (fl *fanout) wait(b *testing.B) {
	done := make(chan struct{})
	go func() { fl.arrived.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(time.Minute):
		b.Fatal("an event did not reach every subscriber within a minute")
	}
}

// plainHub is the baseline: Server-Sent Events fanned out from a channel
// per subscriber.
type plainHub struct {
	mu   sync.Mutex
	subs map[chan []byte]bool
}

func newPlainHub() *plainHub { return &plainHub{subs: map[chan []byte]bool{}} }

func (h *plainHub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ch := make(chan []byte, 16)
	h.mu.Lock()
	h.subs[ch] = true
	h.mu.Unlock()
	defer func() {
		h.mu.Lock()
		delete(h.subs, ch)
		h.mu.Unlock()
	}()
	w.Header().Set("Content-Type", "text/event-stream")
	fmt.Fprint(w, "event: ready\ndata: {}\n\n")
	rc := http.NewResponseController(w)
	for {
		if rc.Flush() != nil {
			return
		}
		select {
		case msg := <-ch:
			if _, err := w.Write(msg); err != nil {
				return
			}
		case <-r.Context().Done():
			return
		}
	}
}

// send sends a change event naming name to every subscriber.
func (h *plainHub) send(name string) {
	data, _ := json.Marshal(map[string]any{"changed": []string{name}})
	msg := fmt.Appendf(nil, "event: change\ndata: %s\n\n", data)
	h.mu.Lock()
	defer h.mu.Unlock()
	for ch := range h.subs {
		select {
		case ch <- msg:
		default: // a slow subscriber misses it, and the benchmark waits
		}
	}
}
