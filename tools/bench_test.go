package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/provider"
	"github.com/forkspace/forkspace/provider/hostdirprovider"
	"github.com/forkspace/forkspace/provider/localprovider"
	"github.com/forkspace/forkspace/tools"
	"github.com/forkspace/forkspace/vfs"
)

// corpus is source-like files (~3 KB each), 50 to a directory, written to
// an on-disk forkspace store and to a host directory.
type corpus struct {
	store *forkspace.Store
	local provider.Workspace
	host  provider.Workspace
	dir   string // the host copy
	root  string // the temp directory holding the store and dir
	bytes int64
}

// corpora holds one corpus per file count, built on first use.
var (
	corporaMu sync.Mutex
	corpora   = map[int]*corpus{}
)

func fileText(i int) string {
	var b strings.Builder
	fmt.Fprintf(&b, "package p%d\n\nimport \"fmt\"\n\n", i/50)
	for j := range 30 {
		fmt.Fprintf(&b, "// f%d_%d formats value number %d for the report.\n", i, j, j)
		if i%997 == 0 && j == 7 {
			b.WriteString("// NeedleMarker: the rare line the benchmark looks for.\n")
		}
		fmt.Fprintf(&b, "func f%d_%d(x int) string { return fmt.Sprint(x) }\n", i, j)
	}
	return b.String()
}

// TestMain removes the corpora the benchmarks built (100,000 files take
// ~750 MB).
func TestMain(m *testing.M) {
	code := m.Run()
	for _, c := range corpora {
		_ = c.store.Close()
		_ = os.RemoveAll(c.root)
	}
	os.Exit(code)
}

// loadCorpus returns the corpus of n files, building it on first use.
func loadCorpus(b *testing.B, n int) *corpus {
	corporaMu.Lock()
	defer corporaMu.Unlock()
	if c := corpora[n]; c != nil {
		return c
	}
	c, err := buildCorpus(n)
	if err != nil {
		b.Fatal(err)
	}
	corpora[n] = c
	return c
}

// corpusBatch is how many files buildCorpus writes to the store in one
// batch.
const corpusBatch = 1000

func buildCorpus(n int) (*corpus, error) {
	ctx := context.Background()
	root, err := os.MkdirTemp("", "forkspace-grep-bench-")
	if err != nil {
		return nil, err
	}
	c := &corpus{dir: filepath.Join(root, "files"), root: root}
	quiet := slog.New(slog.DiscardHandler)
	if c.store, err = forkspace.Open(ctx, forkspace.Options{Dir: filepath.Join(root, "store"), Logger: quiet}); err != nil {
		return nil, err
	}
	ws, err := c.store.Create(ctx, "bench", forkspace.CreateOptions{})
	if err != nil {
		return nil, err
	}
	for lo := 0; lo < n; lo += corpusBatch {
		err := ws.Batch(ctx, func(b *vfs.FS) error {
			for i := lo; i < min(lo+corpusBatch, n); i++ {
				dir := fmt.Sprintf("src/pkg%04d", i/50)
				name := fmt.Sprintf("%s/file%06d.go", dir, i)
				text := []byte(fileText(i))
				c.bytes += int64(len(text))
				if i%50 == 0 {
					if err := b.MkdirAll(ctx, dir, 0o755); err != nil {
						return err
					}
					if err := os.MkdirAll(filepath.Join(c.dir, dir), 0o755); err != nil {
						return err
					}
				}
				if err := b.WriteFile(ctx, name, text, 0o644); err != nil {
					return err
				}
				if err := os.WriteFile(filepath.Join(c.dir, name), text, 0o644); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	p := localprovider.New(c.store, localprovider.Options{Logger: quiet})
	if c.local, _, err = p.Open(ctx, localprovider.Config{Workspace: "bench"}, provider.Session{ID: "bench"}, nil); err != nil {
		return nil, err
	}
	c.host, _, err = hostdirprovider.New(quiet).Open(ctx, hostdirprovider.Config{Dir: c.dir}, provider.Session{ID: "bench"}, nil)
	return c, err
}

// BenchmarkGrep10k greps 10,000 files (≈31 MB) for a rare string: the
// grep tool over the on-disk store (forkspace), the grep tool over the same
// files in a host directory (hostdir), and ripgrep over that directory
// (rg, when installed), in one run, each with its CPU time (cpu-s/op).
func BenchmarkGrep10k(b *testing.B) { benchGrep(b, 10_000) }

// BenchmarkGrep100k is BenchmarkGrep10k over 100,000 files (≈310 MB,
// built in about a minute). Both report the process's peak RSS since the
// corpus was built (peak-rss-MiB) and the heap in use after the searches
// (heap-MiB): neither must grow with the file count.
func BenchmarkGrep100k(b *testing.B) { benchGrep(b, 100_000) }

func benchGrep(b *testing.B, n int) {
	c := loadCorpus(b, n)
	want := (n-1)/997 + 1 // files holding the needle: fileText
	resetPeakRSS()
	set := tools.New(tools.Options{})
	searches := []struct {
		name string
		args map[string]any
		rg   []string
	}{
		{"literal", map[string]any{"pattern": "NeedleMarker", "literal": true, "max_results": 1000}, []string{"-F", "NeedleMarker"}},
		{"regex", map[string]any{"pattern": `Needle\w+:`, "max_results": 1000}, []string{`Needle\w+:`}},
		{"ignorecase", map[string]any{"pattern": "needlemarker", "ignore_case": true, "max_results": 1000}, []string{"-i", "needlemarker"}},
	}
	for _, s := range searches {
		args, _ := json.Marshal(s.args)
		for _, target := range []struct {
			name string
			ws   provider.Workspace
		}{{"forkspace", c.local}, {"hostdir", c.host}} {
			b.Run(s.name+"/"+target.name, func(b *testing.B) {
				b.SetBytes(c.bytes)
				b.ReportAllocs()
				cpu := cpuTime(syscall.RUSAGE_SELF)
				for b.Loop() {
					r := set.Call(context.Background(), tools.Direct(target.ws), "grep", args)
					if r.IsError || strings.Count(r.Text, "NeedleMarker") != want {
						b.Fatalf("grep: %.300s", r.Text)
					}
				}
				reportCPU(b, cpuTime(syscall.RUSAGE_SELF)-cpu)
				reportMemory(b)
			})
		}
		if rg, err := exec.LookPath("rg"); err == nil {
			b.Run(s.name+"/ripgrep", func(b *testing.B) {
				b.SetBytes(c.bytes)
				cpu := cpuTime(syscall.RUSAGE_CHILDREN)
				for b.Loop() {
					out, err := exec.Command(rg, append([]string{"-n", "--no-heading"}, append(s.rg, c.dir)...)...).Output()
					if err != nil || strings.Count(string(out), "NeedleMarker") != want {
						b.Fatalf("rg: %v %.300s", err, out)
					}
				}
				reportCPU(b, cpuTime(syscall.RUSAGE_CHILDREN)-cpu)
			})
		}
	}
}

// cpuTime returns the CPU time (user and system) used by the process
// (syscall.RUSAGE_SELF) or by its children waited for
// (syscall.RUSAGE_CHILDREN).
func cpuTime(who int) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(who, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// reportCPU reports the CPU time of b's iterations as cpu-s/op: on a
// shared machine it varies less than the wall time.
func reportCPU(b *testing.B, cpu time.Duration) {
	b.ReportMetric(cpu.Seconds()/float64(b.N), "cpu-s/op")
}

// resetPeakRSS returns the heap to the system and resets the process's
// peak RSS (Linux: clear_refs 5), so that reportMemory's peak is the
// searches' own.
func resetPeakRSS() {
	debug.FreeOSMemory()
	_ = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0)
}

// reportMemory reports the process's peak RSS (VmHWM), its resident
// anonymous memory and mapped file pages now (RssAnon, RssFile: SQLite maps
// the database), and its live heap after a collection.
func reportMemory(b *testing.B) {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	b.ReportMetric(float64(ms.HeapAlloc)/(1<<20), "heap-MiB")
	status, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return
	}
	for l := range strings.Lines(string(status)) {
		name, v, _ := strings.Cut(l, ":")
		unit := map[string]string{"VmHWM": "peak-rss-MiB", "RssAnon": "anon-MiB", "RssFile": "file-MiB"}[name]
		if kb, err := strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(v), " kB")); unit != "" && err == nil {
			b.ReportMetric(float64(kb)/1024, unit)
		}
	}
}

// BenchmarkToolCall is the in-process cost of one small tool call (stat of
// a file), the floor under the MCP latencies.
func BenchmarkToolCall(b *testing.B) {
	c := loadCorpus(b, 10_000)
	set := tools.New(tools.Options{})
	args := json.RawMessage(`{"path":"src/pkg0000/file000000.go"}`)
	b.ReportAllocs()
	for b.Loop() {
		if r := set.Call(context.Background(), tools.Direct(c.local), "stat", args); r.IsError {
			b.Fatal(r.Text)
		}
	}
}
