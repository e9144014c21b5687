package tools_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"

	"github.com/forkspace/forkspace/provider"
	"github.com/forkspace/forkspace/provider/memprovider"
	"github.com/forkspace/forkspace/tools"
)

// TestConcurrentCalls runs many tool calls at once on one workspace (run
// it with -race): concurrent edits of one file are serialized, so every
// edit lands; reads, greps and writes of other files proceed alongside.
func TestConcurrentCalls(t *testing.T) {
	e := newEnv(t, tools.Options{})
	e.put("log.txt", "END\n")
	const n = 16
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			e.ok("edit", M{"path": "log.txt", "edits": []M{{"old_text": "END\n", "new_text": fmt.Sprintf("entry %d\nEND\n", i)}}})
		})
		wg.Go(func() { e.ok("write", M{"path": fmt.Sprintf("w/%d.txt", i), "content": "x"}) })
		wg.Go(func() { e.ok("read", M{"path": "log.txt"}) })
		wg.Go(func() { e.ok("grep", M{"pattern": "entry"}) })
		wg.Go(func() { e.ok("ls", M{}) })
	}
	wg.Wait()
	got := e.get("log.txt")
	for i := range n {
		if !strings.Contains(got, fmt.Sprintf("entry %d\n", i)) {
			t.Errorf("edit %d lost: %q", i, got)
		}
	}
	if entries := e.ok("ls", M{"path": "w"}); strings.Count(entries, "\n")+1 != n {
		t.Errorf("ls w = %q", entries)
	}
}

func TestSchemas(t *testing.T) {
	set := tools.New(tools.Options{})
	want := "read write edit ls stat rm mkdir mv glob grep checkpoint checkpoints restore diff fork merge conflicts resolve cherry_pick compare promote history exec exec_status exec_tail exec_output exec_wait exec_kill"
	var names []string
	for _, tl := range set.Tools() {
		names = append(names, tl.Name)
		data, err := json.Marshal(tl.InputSchema)
		if err != nil || tl.InputSchema.Type != "object" || tl.Description == "" {
			t.Errorf("%s: schema %s, %v", tl.Name, data, err)
		}
		if strings.Contains(string(data), `"Path"`) {
			t.Errorf("%s: schema uses Go field names: %s", tl.Name, data)
		}
	}
	if got := strings.Join(names, " "); got != want {
		t.Errorf("tools = %s", got)
	}
	read, _ := set.Tool("read")
	data, _ := json.Marshal(read.InputSchema)
	if !strings.Contains(string(data), `"required":["path"]`) || !strings.Contains(string(data), "1-based") {
		t.Errorf("read schema = %s", data)
	}
}

func TestBadArguments(t *testing.T) {
	e := newEnv(t, tools.Options{})
	for _, args := range []string{`[1]`, `{"path":`, `{"path":1}`, `{"path":"a","bogus":true}`} {
		r := e.set.Call(context.Background(), tools.Direct(e.ws), "read", json.RawMessage(args))
		if !r.IsError || !strings.Contains(r.Text, "invalid arguments") {
			t.Errorf("read %s = %+v, want an invalid-arguments error", args, r)
		}
	}
	if r := e.set.Call(context.Background(), tools.Direct(e.ws), "ls", nil); r.IsError {
		t.Errorf("ls without arguments: %s", r.Text)
	}
	if r := e.set.Call(context.Background(), tools.Direct(e.ws), "nope", nil); !r.IsError || !strings.Contains(r.Text, "available tools") {
		t.Errorf("unknown tool = %+v", r)
	}
}

// TestSessionTarget: tools through the session manager open the workspace
// lazily on the first call; a provider failure is a tool error, not a
// crash.
func TestSessionTarget(t *testing.T) {
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)
	p, err := memprovider.New(ctx, memprovider.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var reg provider.Registry
	reg.Register(p)
	m := provider.NewManager(provider.ManagerOptions{Registry: &reg, Logger: quiet})
	defer m.Close(ctx)
	set := tools.New(tools.Options{})
	target := tools.Session(m, provider.Session{ID: "s"}, provider.Declaration{Name: "box", Config: memprovider.Config{}})
	if r := set.Call(ctx, target, "write", json.RawMessage(`{"path":"a","content":"x"}`)); r.IsError {
		t.Fatal(r.Text)
	}
	if r := set.Call(ctx, target, "read", json.RawMessage(`{"path":"a"}`)); r.Text != "     1\tx" {
		t.Errorf("read = %+v", r)
	}
	bad := tools.Session(m, provider.Session{ID: "s"}, provider.Declaration{Name: "box2", Config: memprovider.Config{},
		Capabilities: &provider.Capabilities{Shell: true}})
	if r := set.Call(ctx, bad, "ls", nil); !r.IsError || !strings.Contains(r.Text, "workspace is unavailable") {
		t.Errorf("failed workspace = %+v", r)
	}
}
