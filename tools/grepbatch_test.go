package tools_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/forkspace/forkspace/provider"
	"github.com/forkspace/forkspace/tools"
	"github.com/forkspace/forkspace/vfs"
)

// oneByOne hides a workspace's provider.FilesReader: grep reads its files
// one ReadFile at a time, as it did before batched reads.
type oneByOne struct{ provider.Workspace }

func (w oneByOne) FS() provider.FS { return struct{ provider.FS }{w.Workspace.FS()} }

// TestGrepBatches greps a tree of more files than a claim holds, inline
// and chunked and empty ones, links, directories, a binary file and one
// too large to search: every search gives the same output whether the
// files are read in batches or one by one. (A search stopped by
// max_results counts the skipped files among those searched by then, which
// depends on timing either way: only its matches are compared.)
func TestGrepBatches(t *testing.T) {
	ctx := context.Background()
	e := newEnv(t, tools.Options{MaxGrepFileBytes: 100 << 10})
	f := e.ws.FS().(*vfs.FS)
	if _, ok := e.ws.FS().(provider.FilesReader); !ok {
		t.Fatal("a workspace's FS reads no batches")
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	for i := range 150 {
		dir := fmt.Sprintf("src/d%d", i%4)
		must(f.MkdirAll(ctx, dir, 0o755))
		var data []byte
		switch i % 6 {
		case 0: // empty
		case 1:
			data = fmt.Appendf(nil, "line one\nNeedle %d here\nlast line\n", i)
		case 2:
			data = bytes.Repeat(fmt.Appendf(nil, "filler %d needle\n", i), 3000) // chunked
		case 3:
			data = fmt.Appendf(nil, "nothing to see %d\n", i)
		case 4:
			data = fmt.Appendf(nil, "NEEDLE\x00binary %d\n", i)
		case 5:
			data = bytes.Repeat([]byte("needle in a large file\n"), 6000) // too large
		}
		must(f.WriteFile(ctx, fmt.Sprintf("%s/f%03d.txt", dir, i), data, 0o644))
	}
	must(f.Symlink(ctx, "d1", "src/link-dir"))
	must(f.Symlink(ctx, "d0/f001.txt", "src/link-file"))
	searches := []map[string]any{
		{"pattern": "needle", "ignore_case": true, "max_results": 10000},
		{"pattern": `Needle \d+`, "context": 1},
		{"pattern": "needle", "literal": true, "max_results": 7},
		{"pattern": "needle", "ignore_case": true, "glob": "**/d2/*.txt"},
		{"pattern": "Needle", "path": "src/d1"},
		{"pattern": "Needle", "path": "src/d1/f001.txt"},
		{"pattern": "absent"},
	}
	batched, single := e.set, tools.Direct(oneByOne{e.ws})
	for _, s := range searches {
		got := e.ok("grep", s)
		want := callText(t, batched, single, s)
		if s["max_results"] == 7 {
			got, want = withoutSkipped(got), withoutSkipped(want)
		}
		if got != want {
			t.Errorf("grep %v:\nbatched:\n%s\none by one:\n%s", s, got, want)
		}
	}
}

// callText runs grep with args on target and returns its text.
func callText(t *testing.T, set *tools.Set, target tools.Target, args map[string]any) string {
	t.Helper()
	data, err := json.Marshal(args)
	if err != nil {
		t.Fatal(err)
	}
	r := set.Call(context.Background(), target, "grep", data)
	if r.IsError {
		t.Fatalf("grep %v: %s", args, r.Text)
	}
	return r.Text
}

// withoutSkipped drops grep's counts of skipped files.
func withoutSkipped(text string) string {
	var out []string
	for _, l := range strings.Split(text, "\n") {
		if !strings.HasPrefix(l, "(") {
			out = append(out, l)
		}
	}
	return strings.Join(out, "\n")
}
