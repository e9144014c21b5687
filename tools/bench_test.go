package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/provider"
	"github.com/forkspace/forkspace/provider/hostdirprovider"
	"github.com/forkspace/forkspace/provider/localprovider"
	"github.com/forkspace/forkspace/tools"
)

// corpus is 10,000 source-like files (~2 KB each) in 200 directories,
// written to an on-disk forkspace store and to a host directory.
type corpus struct {
	store *forkspace.Store
	local provider.Workspace
	host  provider.Workspace
	dir   string // the host copy
	bytes int64
}

var (
	corpusOnce sync.Once
	benchFiles *corpus
	corpusErr  error
)

const benchFileCount = 10_000

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

func loadCorpus(b *testing.B) *corpus {
	corpusOnce.Do(func() {
		benchFiles, corpusErr = buildCorpus()
	})
	if corpusErr != nil {
		b.Fatal(corpusErr)
	}
	return benchFiles
}

func buildCorpus() (*corpus, error) {
	ctx := context.Background()
	root, err := os.MkdirTemp("", "forkspace-grep-bench-")
	if err != nil {
		return nil, err
	}
	c := &corpus{dir: filepath.Join(root, "files")}
	quiet := slog.New(slog.DiscardHandler)
	if c.store, err = forkspace.Open(ctx, forkspace.Options{Dir: filepath.Join(root, "store"), Logger: quiet}); err != nil {
		return nil, err
	}
	ws, err := c.store.Create(ctx, "bench", forkspace.CreateOptions{})
	if err != nil {
		return nil, err
	}
	for i := range benchFileCount {
		dir := fmt.Sprintf("src/pkg%03d", i/50)
		name := fmt.Sprintf("%s/file%05d.go", dir, i)
		text := []byte(fileText(i))
		c.bytes += int64(len(text))
		if i%50 == 0 {
			if err := ws.MkdirAll(ctx, dir, 0o755); err != nil {
				return nil, err
			}
			if err := os.MkdirAll(filepath.Join(c.dir, dir), 0o755); err != nil {
				return nil, err
			}
		}
		if err := ws.WriteFile(ctx, name, text, 0o644); err != nil {
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(c.dir, name), text, 0o644); err != nil {
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

// BenchmarkGrep10k greps 10,000 files (≈20 MB) for a rare string: the grep
// tool over the on-disk store (forkspace), the grep tool over the same
// files in a host directory (hostdir), and ripgrep over that directory
// (rg, when installed), in one run.
func BenchmarkGrep10k(b *testing.B) {
	c := loadCorpus(b)
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
				for b.Loop() {
					r := set.Call(context.Background(), tools.Direct(target.ws), "grep", args)
					if r.IsError || strings.Count(r.Text, "NeedleMarker") != 11 {
						b.Fatalf("grep: %.300s", r.Text)
					}
				}
			})
		}
		if rg, err := exec.LookPath("rg"); err == nil {
			b.Run(s.name+"/ripgrep", func(b *testing.B) {
				b.SetBytes(c.bytes)
				for b.Loop() {
					out, err := exec.Command(rg, append([]string{"-n", "--no-heading"}, append(s.rg, c.dir)...)...).Output()
					if err != nil || strings.Count(string(out), "NeedleMarker") != 11 {
						b.Fatalf("rg: %v %.300s", err, out)
					}
				}
			})
		}
	}
}

// BenchmarkToolCall is the in-process cost of one small tool call (stat of
// a file), the floor under the MCP latencies.
func BenchmarkToolCall(b *testing.B) {
	c := loadCorpus(b)
	set := tools.New(tools.Options{})
	args := json.RawMessage(`{"path":"src/pkg000/file00000.go"}`)
	b.ReportAllocs()
	for b.Loop() {
		if r := set.Call(context.Background(), tools.Direct(c.local), "stat", args); r.IsError {
			b.Fatal(r.Text)
		}
	}
}
