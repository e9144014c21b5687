package httpapi_test

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/audit"
	"github.com/forkspace/forkspace/auth"
	"github.com/forkspace/forkspace/gc"
	"github.com/forkspace/forkspace/httpapi"
)

// benchClient is an HTTP client with enough idle connections for 32
// parallel callers.
var benchClient = &http.Client{Transport: &http.Transport{MaxIdleConns: 64, MaxIdleConnsPerHost: 64}}

// get fetches u and discards the body, sending hdr (name, value pairs).
func get(u string, hdr ...string) error {
	req, err := http.NewRequest("GET", u, nil)
	if err != nil {
		return err
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	return do(req)
}

// put uploads size bytes of body to u.
func put(u string, body io.Reader, size int64) error {
	req, err := http.NewRequest("PUT", u, body)
	if err != nil {
		return err
	}
	req.ContentLength = size
	return do(req)
}

// do sends req with benchClient and wants 200.
func do(req *http.Request) error {
	resp, err := benchClient.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		return fmt.Errorf("%s %s: %d", req.Method, req.URL, resp.StatusCode)
	}
	return nil
}

// side is one side of a side-by-side benchmark: a call to the REST API
// or to the plain server.
type side struct {
	name string
	call func() error
}

// Side-by-side benchmarks take turns: the sides run one after the other
// in short slices, many times, so that the shared machine's changing
// load does not favour one side (sub-benchmarks run seconds apart did
// differ by 2x from run to run).
const (
	turns = 10
	slice = 300 * time.Millisecond
)

// throughput runs clients concurrent callers of each side in turn and
// reports each side's calls/s (NAME-calls/s) and each side's ratio to
// the last one, the baseline (NAME/BASE).
func throughput(b *testing.B, clients int, sides ...side) {
	calls := make([]int64, len(sides))
	spent := make([]time.Duration, len(sides))
	for range turns {
		for i, sd := range sides {
			var n atomic.Int64
			start := time.Now()
			stop := start.Add(slice)
			var wg sync.WaitGroup
			for range clients {
				wg.Go(func() {
					for time.Now().Before(stop) {
						if err := sd.call(); err != nil {
							b.Error(err)
							return
						}
						n.Add(1)
					}
				})
			}
			wg.Wait()
			calls[i] += n.Load()
			spent[i] += time.Since(start)
		}
	}
	if b.Failed() {
		b.FailNow()
	}
	rate := func(i int) float64 { return float64(calls[i]) / spent[i].Seconds() }
	base := len(sides) - 1
	for i, sd := range sides {
		b.ReportMetric(rate(i), sd.name+"-calls/s")
		if i != base {
			b.ReportMetric(rate(i)/rate(base), sd.name+"/"+sides[base].name)
		}
	}
}

// plainServer serves dir with Go's http.FileServer (and accepts uploads
// to it with PUT), the baseline of the benchmarks.
func plainServer(b *testing.B, dir string) string {
	mux := http.NewServeMux()
	mux.Handle("GET /", http.FileServer(http.Dir(dir)))
	mux.HandleFunc("PUT /{name}", func(w http.ResponseWriter, r *http.Request) {
		f, err := os.CreateTemp(dir, "up-*")
		if err != nil {
			http.Error(w, err.Error(), 500)
			return
		}
		defer os.Remove(f.Name())
		defer f.Close()
		if _, err := io.Copy(f, r.Body); err != nil {
			http.Error(w, err.Error(), 500)
		}
	})
	srv := httptest.NewServer(mux)
	b.Cleanup(srv.Close)
	return srv.URL
}

// BenchmarkSmallFile: stat and read of a 1 KiB file by 32 concurrent
// clients, through the REST API (without tokens, and behind them with a
// read-only token) and from a plain Go file server, taking turns (run
// with -benchtime=1x).
func BenchmarkSmallFile(b *testing.B) {
	e := newEnv(b)
	ctx := context.Background()
	_, err := e.client.CreateWorkspace(ctx, httpapi.CreateRequest{Name: "w"})
	must(b, err)
	data := bytes.Repeat([]byte("x"), 1024)
	_, err = e.client.Write(ctx, "w", "small.txt", bytes.NewReader(data), httpapi.WriteRequest{})
	must(b, err)
	tk, err := e.st.Tokens(ctx)
	must(b, err)
	token, err := tk.Create(ctx, nil, auth.Request{Workspaces: "w", Perms: auth.Read})
	must(b, err)
	authed := newServed(b, e.local, httpapi.Options{Tokens: tk})
	bearer := []string{"Authorization", "Bearer " + token.Token}
	dir := b.TempDir()
	must(b, os.WriteFile(filepath.Join(dir, "small.txt"), data, 0o644))
	plain := plainServer(b, dir)
	fetch := func(name, u string, hdr ...string) side {
		return side{name, func() error { return get(u, hdr...) }}
	}
	for b.Loop() {
		throughput(b, 32,
			fetch("rest-stat", e.url+"/v1/workspaces/w/stat/small.txt"),
			fetch("rest-read", e.url+"/v1/workspaces/w/files/small.txt"),
			fetch("rest-stat-token", authed+"/v1/workspaces/w/stat/small.txt", bearer...),
			fetch("rest-read-token", authed+"/v1/workspaces/w/files/small.txt", bearer...),
			fetch("plain-read", plain+"/small.txt"))
	}
}

// BenchmarkLargeFile: 1 GiB uploads and downloads through the REST API,
// to and from a plain Go file server, and through the library alone (no
// HTTP), taking turns: each iteration is a round in which every side
// moves the file once, the order reversed from one round to the next,
// after one untimed round (whichever side runs first pays for the
// process's first page cache and heap). After each upload the previous
// contents are removed and collected off the clock, as the plain server
// removes its temp file, so every upload stores all of its chunks into
// recycled page cache. Reported per side: MiB/s, the process's CPU time
// (client and server) per GiB, and the REST and library sides' throughput
// against the plain server's. Run with -benchtime 2x (two rounds) or more.
func BenchmarkLargeFile(b *testing.B) {
	const size = 1 << 30
	e := newEnv(b)
	ctx := context.Background()
	// Keep no history: a removed upload's chunks are garbage at once.
	must(b, e.st.SetHistoryRetention(ctx, audit.Retention{Steps: 1, Age: time.Nanosecond}))
	_, err := e.client.CreateWorkspace(ctx, httpapi.CreateRequest{Name: "w"})
	must(b, err)
	dir := b.TempDir()
	// The uploads' bytes differ from the downloaded file's, so no upload
	// finds its chunks already stored.
	src, down := filepath.Join(dir, "up.bin"), filepath.Join(dir, "down.bin")
	for _, p := range []string{src, down} {
		f, err := os.Create(p)
		must(b, err)
		_, err = io.CopyN(f, randReader{}, size)
		must(b, errors.Join(err, f.Close()))
	}
	f, err := os.Open(down)
	must(b, err)
	_, err = e.local.Write(ctx, "w", "down.bin", f, httpapi.WriteRequest{})
	must(b, errors.Join(err, f.Close()))
	plain := plainServer(b, dir)
	fromSrc := func(fn func(io.Reader) error) error {
		f, err := os.Open(src)
		if err != nil {
			return err
		}
		defer f.Close() // the HTTP client closes it too
		return fn(f)
	}
	upload := func(u string) func() error {
		return func() error { return fromSrc(func(r io.Reader) error { return put(u, r, size) }) }
	}
	// collect removes file name and collects its chunks.
	collect := func(name string) error {
		if err := e.local.Remove(ctx, "w", name, false); err != nil {
			return err
		}
		_, err := e.st.GC(ctx, forkspace.GCOptions{Grace: gc.NoGrace})
		return err
	}
	type transfer struct {
		name      string
		run       func() error
		after     func() error // off the clock
		wall, cpu time.Duration
	}
	uploads := []*transfer{
		{name: "rest-upload", run: upload(e.url + "/v1/workspaces/w/files/up.bin"), after: func() error { return collect("up.bin") }},
		{name: "library-write", run: func() error {
			return fromSrc(func(r io.Reader) error {
				_, err := e.local.Write(ctx, "w", "lib.bin", r, httpapi.WriteRequest{})
				return err
			})
		}, after: func() error { return collect("lib.bin") }},
		{name: "plain-upload", run: upload(plain + "/up.bin")},
	}
	downloads := []*transfer{
		{name: "rest-download", run: func() error { return get(e.url + "/v1/workspaces/w/files/down.bin") }},
		{name: "library-read", run: func() error {
			d, err := e.local.Open(ctx, "w", "down.bin", httpapi.ReadRequest{Length: -1})
			if err != nil {
				return err
			}
			_, err = io.Copy(io.Discard, d)
			return errors.Join(err, d.Close())
		}},
		{name: "plain-download", run: func() error { return get(plain + "/down.bin") }},
	}
	round := func(n int, timed bool) {
		for _, sides := range [][]*transfer{uploads, downloads} {
			order := slices.Clone(sides)
			if n%2 == 1 {
				slices.Reverse(order)
			}
			for _, t := range order {
				cpu, start := cpuTime(), time.Now()
				must(b, t.run())
				if timed {
					t.wall += time.Since(start)
					t.cpu += cpuTime() - cpu
				}
				if t.after != nil {
					must(b, t.after())
				}
			}
		}
	}
	round(1, false)
	n := 0
	for b.Loop() {
		round(n, true)
		n++
	}
	for _, sides := range [][]*transfer{uploads, downloads} {
		base := sides[len(sides)-1]
		for _, t := range sides {
			b.ReportMetric(float64(n*size)/t.wall.Seconds()/(1<<20), t.name+"-MiB/s")
			b.ReportMetric(t.cpu.Seconds()/float64(n), t.name+"-cpu-s/GiB")
			if t != base {
				b.ReportMetric(base.wall.Seconds()/t.wall.Seconds(), t.name+"/plain")
			}
		}
	}
}

// cpuTime returns the CPU time (user and system) the process has used.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// randReader yields incompressible, non-repeating bytes quickly.
type randReader struct{}

var randBlock = func() []byte {
	b := make([]byte, 1<<20)
	x := uint64(88172645463325252)
	for i := range b {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		b[i] = byte(x)
	}
	return b
}()

var randCounter uint64

func (randReader) Read(p []byte) (int, error) {
	// Each 1 MiB block differs by its first 8 bytes, so chunks do not
	// deduplicate.
	n := copy(p, randBlock)
	randCounter++
	copy(p, fmt.Sprintf("%08x", randCounter))
	return n, nil
}

// latencies collects the durations of calls, safe for concurrent use.
type latencies struct {
	mu sync.Mutex
	d  []time.Duration
}

func (l *latencies) add(d time.Duration) {
	l.mu.Lock()
	l.d = append(l.d, d)
	l.mu.Unlock()
}

// report reports the p50, p99 and maximum in milliseconds, as metrics
// named with prefix.
func (l *latencies) report(b *testing.B, prefix string) {
	slices.Sort(l.d)
	at := func(p float64) float64 { return float64(l.d[int(p*float64(len(l.d)-1))]) / 1e6 }
	b.ReportMetric(at(0.50), prefix+"p50-ms")
	b.ReportMetric(at(0.99), prefix+"p99-ms")
	b.ReportMetric(at(1), prefix+"max-ms")
}

// BenchmarkSmallUploads: uploads of new 1 KiB files by 8 concurrent
// clients, through the REST API and to a plain Go server, taking turns
// (run with -benchtime=1x).
func BenchmarkSmallUploads(b *testing.B) {
	e := newEnv(b)
	ctx := context.Background()
	_, err := e.client.CreateWorkspace(ctx, httpapi.CreateRequest{Name: "w"})
	must(b, err)
	must(b, e.client.Mkdir(ctx, "w", "up", false))
	plain := plainServer(b, b.TempDir())
	data := bytes.Repeat([]byte("x"), 1024)
	var n atomic.Int64
	upload := func(name, u string) side {
		return side{name, func() error { return put(fmt.Sprintf("%sf%d", u, n.Add(1)), bytes.NewReader(data), int64(len(data))) }}
	}
	for b.Loop() {
		throughput(b, 8, upload("rest", e.url+"/v1/workspaces/w/files/up/"), upload("plain", plain+"/"))
	}
}

// BenchmarkListDir: one page of a directory of 10,000 files (the first
// 1,000 by default, and all 10,000), through the REST API, against a
// plain Go file server's listing of a directory of as many files; each
// iteration lists once from each, in turn.
func BenchmarkListDir(b *testing.B) {
	const files = 10000
	e := newEnv(b)
	ctx := context.Background()
	_, err := e.client.CreateWorkspace(ctx, httpapi.CreateRequest{Name: "w"})
	must(b, err)
	dir := b.TempDir()
	var archive bytes.Buffer
	tw := tar.NewWriter(&archive)
	for i := range files {
		name := fmt.Sprintf("f%05d.txt", i)
		must(b, tw.WriteHeader(&tar.Header{Name: "d/" + name, Mode: 0o644, Size: 3}))
		_, err := tw.Write([]byte("abc"))
		must(b, err)
		must(b, os.WriteFile(filepath.Join(dir, name), []byte("abc"), 0o644))
	}
	must(b, tw.Close())
	_, err = e.local.ImportTar(ctx, "w", ".", &archive)
	must(b, err)
	plain := plainServer(b, dir)
	urls := []struct{ name, url string }{
		{"rest-page-1000-", e.url + "/v1/workspaces/w/dir/d"},
		{"rest-page-10000-", e.url + "/v1/workspaces/w/dir/d?limit=10000"},
		{"plain-10000-", plain + "/"},
	}
	lat := make([]latencies, len(urls))
	for b.Loop() {
		for i, u := range urls {
			t0 := time.Now()
			must(b, get(u.url))
			lat[i].add(time.Since(t0))
		}
	}
	for i, u := range urls {
		lat[i].report(b, u.name)
	}
}
