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
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/forkspace/forkspace/auth"
	"github.com/forkspace/forkspace/httpapi"
)

// benchClient is an HTTP client with enough idle connections for 32
// parallel callers.
var benchClient = &http.Client{Transport: &http.Transport{MaxIdleConns: 64, MaxIdleConnsPerHost: 64}}

// get fetches u and discards the body, sending hdr (name, value pairs).
func get(b *testing.B, u string, hdr ...string) {
	req, err := http.NewRequest("GET", u, nil)
	must(b, err)
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	resp, err := benchClient.Do(req)
	if err != nil {
		b.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		b.Fatalf("GET %s: %d", u, resp.StatusCode)
	}
}

// put uploads size bytes of body to u.
func put(b *testing.B, u string, body io.Reader, size int64) {
	req, err := http.NewRequest("PUT", u, body)
	must(b, err)
	req.ContentLength = size
	resp, err := benchClient.Do(req)
	must(b, err)
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 {
		b.Fatalf("PUT %s: %d", u, resp.StatusCode)
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
// read-only token) and from a plain Go file server.
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
	for _, c := range []struct {
		name, url string
		hdr       []string
	}{
		{"rest-stat", e.url + "/v1/workspaces/w/stat/small.txt", nil},
		{"rest-read", e.url + "/v1/workspaces/w/files/small.txt", nil},
		{"rest-stat-token", authed + "/v1/workspaces/w/stat/small.txt", bearer},
		{"rest-read-token", authed + "/v1/workspaces/w/files/small.txt", bearer},
		{"plain-read", plain + "/small.txt", nil},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetParallelism(32 / max(1, runtimeProcs()))
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					get(b, c.url, c.hdr...)
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "calls/s")
		})
	}
}

// BenchmarkLargeFile: one 1 GiB download and upload, through the REST API
// and to and from a plain Go file server (run with -benchtime=1x).
func BenchmarkLargeFile(b *testing.B) {
	const size = 1 << 30
	e := newEnv(b)
	ctx := context.Background()
	_, err := e.client.CreateWorkspace(ctx, httpapi.CreateRequest{Name: "w"})
	must(b, err)
	dir := b.TempDir()
	// Two files of different bytes, so neither write finds the other's
	// chunks already stored.
	src, src2 := filepath.Join(dir, "big.bin"), filepath.Join(dir, "big2.bin")
	for _, p := range []string{src, src2} {
		f, err := os.Create(p)
		must(b, err)
		_, err = io.CopyN(f, randReader{}, size)
		must(b, err)
		f.Close()
	}
	plain := plainServer(b, dir)
	upload := func(b *testing.B, u string) {
		f, err := os.Open(src)
		must(b, err)
		defer f.Close()
		put(b, u, f, size)
	}
	for _, c := range []struct {
		name string
		fn   func(b *testing.B)
	}{
		{"rest-upload", func(b *testing.B) { upload(b, e.url+"/v1/workspaces/w/files/big.bin") }},
		{"plain-upload", func(b *testing.B) { upload(b, plain+"/up.bin") }},
		{"library-write", func(b *testing.B) {
			f, err := os.Open(src2)
			must(b, err)
			defer f.Close()
			_, err = e.local.Write(ctx, "w", "lib.bin", f, httpapi.WriteRequest{})
			must(b, err)
		}},
		{"library-read", func(b *testing.B) {
			d, err := e.local.Open(ctx, "w", "lib.bin", httpapi.ReadRequest{Length: -1})
			must(b, err)
			_, err = io.Copy(io.Discard, d)
			must(b, errors.Join(err, d.Close()))
		}},
		{"rest-download", func(b *testing.B) { get(b, e.url+"/v1/workspaces/w/files/big.bin") }},
		{"plain-download", func(b *testing.B) { get(b, plain+"/big.bin") }},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(size)
			for b.Loop() {
				c.fn(b)
			}
			b.ReportMetric(float64(size)*float64(b.N)/b.Elapsed().Seconds()/(1<<20), "MiB/s")
		})
	}
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

func runtimeProcs() int { return runtime.GOMAXPROCS(0) }

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
// clients, through the REST API and to a plain Go server.
func BenchmarkSmallUploads(b *testing.B) {
	e := newEnv(b)
	ctx := context.Background()
	_, err := e.client.CreateWorkspace(ctx, httpapi.CreateRequest{Name: "w"})
	must(b, err)
	must(b, e.client.Mkdir(ctx, "w", "up", false))
	plain := plainServer(b, b.TempDir())
	data := bytes.Repeat([]byte("x"), 1024)
	var n atomic.Int64
	for _, c := range []struct{ name, url string }{
		{"rest", e.url + "/v1/workspaces/w/files/up/"},
		{"plain", plain + "/"},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetParallelism(8 / max(1, runtimeProcs()))
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					put(b, fmt.Sprintf("%sf%d", c.url, n.Add(1)), bytes.NewReader(data), int64(len(data)))
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "files/s")
		})
	}
}

// BenchmarkListDir: one page of a directory of 10,000 files (the first
// 1,000 by default, and all 10,000), through the REST API, against a
// plain Go file server's listing of a directory of as many files.
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
	for _, c := range []struct{ name, url string }{
		{"rest-page-1000", e.url + "/v1/workspaces/w/dir/d"},
		{"rest-page-10000", e.url + "/v1/workspaces/w/dir/d?limit=10000"},
		{"plain-10000", plain + "/"},
	} {
		b.Run(c.name, func(b *testing.B) {
			var lat latencies
			for b.Loop() {
				t0 := time.Now()
				get(b, c.url)
				lat.add(time.Since(t0))
			}
			lat.report(b, "")
		})
	}
}
