package tools_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/tools"
)

// TestWatchTool: watch waits for changes under its path from any door,
// returns them with the since that continues without a gap, times out
// quietly, and refuses a since the feed does not have.
func TestWatchTool(t *testing.T) {
	ctx := context.Background()
	e, st := newStoreEnv(t, "agent", func(st *forkspace.Store) tools.Options {
		return tools.Options{Recorder: st.AuditLog(), Feed: st.Feed()}
	})
	ws := e.ws
	watch := func(args map[string]any) tools.WatchResult {
		t.Helper()
		r := e.call("watch", args)
		if r.IsError {
			t.Fatalf("watch %v: %s", args, r.Text)
		}
		b, _ := json.Marshal(r.Structured)
		var res tools.WatchResult
		if err := json.Unmarshal(b, &res); err != nil {
			t.Fatal(err)
		}
		return res
	}
	quiet := watch(map[string]any{"path": "src", "timeout_seconds": 1})
	if !quiet.TimedOut || len(quiet.Changes) != 0 {
		t.Fatalf("watch with nothing happening: %+v", quiet)
	}
	e.ok("write", map[string]any{"path": "docs/notes.md", "content": "n"})
	e.ok("write", map[string]any{"path": "src/a.go", "content": "package a"})
	lib, err := st.Workspace(ctx, ws.ID())
	if err != nil {
		t.Fatal(err)
	}
	if err := lib.WriteFile(ctx, "src/b.go", []byte("package a"), 0o644); err != nil {
		t.Fatal(err)
	}
	var got []string
	since := quiet.Since
	for len(got) < 2 {
		res := watch(map[string]any{"path": "/src", "since": since, "timeout_seconds": 300})
		if res.TimedOut {
			t.Fatalf("watch timed out after %q", got)
		}
		for _, c := range res.Changes {
			got = append(got, c.Tool+" "+strings.Join(c.Changed, ","))
		}
		since = res.Since
	}
	if want := "write src/a.go|library.write src/b.go"; strings.Join(got, "|") != want {
		t.Errorf("changes under src: %q, want %s", got, want)
	}
	// Live: a watch waiting when the change comes.
	done := make(chan tools.WatchResult)
	go func() { done <- watch(map[string]any{"since": since, "timeout_seconds": 300}) }()
	e.ok("rm", map[string]any{"path": "docs/notes.md"})
	if res := <-done; len(res.Changes) != 1 || res.Changes[0].Tool != "rm" || res.Changes[0].Changed[0] != "docs/notes.md" {
		t.Errorf("live watch: %+v", res)
	}
	e.fails("watch", map[string]any{"since": since + 1000}, "not in the change feed")
	e.fails("watch", map[string]any{"path": "../x"}, "escapes the workspace")
	if _, ok := tools.New(tools.Options{ReadOnly: true, Feed: st.Feed()}).Tool("watch"); !ok {
		t.Error("the read-only profile has no watch")
	}
	if _, ok := tools.New(tools.Options{}).Tool("watch"); ok {
		t.Error("a set without a feed has watch")
	}
}
