package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"regexp"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

var writeTranscript = flag.Bool("transcript", false, "TestMCPMergeTranscript: write docs/transcripts/mcp-merge.md")

// transcript records the tool calls of MCP sessions, one section per
// part of the story.
type transcript struct {
	mu sync.Mutex
	b  strings.Builder
}

func (tr *transcript) section(title, text string) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	fmt.Fprintf(&tr.b, "\n## %s\n\n%s\n", title, text)
}

// agent is one MCP session of a real serve, on one workspace.
type agent struct {
	t    *testing.T
	name string
	cs   *mcp.ClientSession
	log  strings.Builder // its calls, as the transcript shows them
}

func connect(t *testing.T, url, workspace string) *agent {
	t.Helper()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "agent-" + workspace, Version: "1"}, nil).
		Connect(context.Background(), &mcp.StreamableClientTransport{Endpoint: url + "?workspace=" + workspace}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cs.Close() })
	return &agent{t: t, name: workspace, cs: cs}
}

// call runs a tool, logs the call and its result, fails the test on an
// error result unless wantErr, and returns the text and the structured
// content.
func (a *agent) call(tool string, args map[string]any, wantErr bool) (string, json.RawMessage) {
	a.t.Helper()
	res, err := a.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		a.t.Fatalf("%s: %s: protocol error %v", a.name, tool, err)
	}
	var text strings.Builder
	for _, c := range res.Content {
		text.WriteString(c.(*mcp.TextContent).Text)
	}
	if res.IsError != wantErr {
		a.t.Fatalf("%s: %s %v: error %v: %s", a.name, tool, args, res.IsError, text.String())
	}
	argText, _ := json.Marshal(args)
	fmt.Fprintf(&a.log, "**%s** → `%s` `%s`\n\n```\n%s\n```\n\n", a.name, tool, argText, text.String())
	structured, _ := json.Marshal(res.StructuredContent)
	return text.String(), structured
}

func (a *agent) ok(tool string, args map[string]any) string {
	a.t.Helper()
	text, _ := a.call(tool, args, false)
	return text
}

// flush returns the agent's log since the last flush.
func (a *agent) flush() string {
	s := a.log.String()
	a.log.Reset()
	return strings.TrimSuffix(s, "\n\n")
}

func must(t *testing.T, cond bool, format string, args ...any) {
	t.Helper()
	if !cond {
		t.Fatalf(format, args...)
	}
}

const calcBase = "def add(a, b):\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n"

// TestMCPMergeTranscript is the scripted MCP session of issue 14's "done
// when": through a real "forkspace serve" and the MCP Go SDK's client,
// an agent forks its workspace two ways, two more sessions work in the
// forks at the same time, the first merges back cleanly, the second with
// a conflict, which is listed and resolved as data; then the agent steps
// back to the state before that merge and forward again by checkpoint
// label, then lists its steps (the history tool) and goes back to the
// one after its first merge by ~N. Every step is asserted; with -transcript the calls and results
// are written to docs/transcripts/mcp-merge.md.
func TestMCPMergeTranscript(t *testing.T) {
	c := newCLI(t)
	url, stop := serve(t, c.store)
	defer stop()
	var tr transcript

	app := connect(t, url, "app")
	app.ok("write", map[string]any{"path": "calc.py", "content": calcBase})
	app.ok("write", map[string]any{"path": "README.md", "content": "# calc\n"})
	cp := app.ok("checkpoint", map[string]any{"label": "v1"})
	must(t, strings.Contains(cp, `(label "v1")`), "checkpoint: %s", cp)
	out := app.ok("fork", map[string]any{"n": 2})
	must(t, strings.Contains(out, "forked the current state 2 ways: app-1, app-2"), "fork n: %s", out)
	tr.section("1. The agent writes a module, checkpoints it and forks two ways", app.flush())

	// Two sessions work in the forks at the same time.
	one, two := connect(t, url, "app-1"), connect(t, url, "app-2")
	var wg sync.WaitGroup
	wg.Go(func() {
		one.ok("edit", map[string]any{"path": "calc.py", "edits": []map[string]any{
			{"old_text": "    return a - b\n", "new_text": "    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"}}})
		one.ok("write", map[string]any{"path": "test_calc.py", "content": "from calc import mul\n\nassert mul(2, 3) == 6\n"})
	})
	wg.Go(func() {
		two.ok("edit", map[string]any{"path": "calc.py", "edits": []map[string]any{
			{"old_text": "def add(a, b):\n    return a + b\n", "new_text": "def add(a, b):\n    \"\"\"Sum of a and b.\"\"\"\n    return a + b\n"},
			{"old_text": "    return a - b\n", "new_text": "    return a - b\n\n\ndef div(a, b):\n    return a / b\n"}}})
	})
	wg.Wait()
	tr.section("2. Two sessions work in the forks at the same time", one.flush()+"\n\n"+two.flush())

	out, structured := app.call("compare", map[string]any{"states": []string{"app", "app-1", "app-2"}, "summary": true}, false)
	var cmp struct{ Changes [][]int }
	must(t, json.Unmarshal(structured, &cmp) == nil && cmp.Changes[0][1] == 2 && cmp.Changes[0][2] == 1, "compare: %s\n%s", out, structured)
	tr.section("3. The agent compares the three states", app.flush())

	out = app.ok("merge", map[string]any{"from": "app-1"})
	must(t, strings.Contains(out, "merged app-1 into this workspace: 2 paths changed"), "merge app-1: %s", out)
	out, structured = app.call("merge", map[string]any{"from": "app-2"}, false)
	must(t, strings.Contains(out, "- calc.py (content)") && strings.Contains(out, "Next: the workspace keeps ours at calc.py"), "merge app-2: %s", out)
	var rep struct {
		Checkpoint string
		Conflicts  []struct{ Path, Kind string }
	}
	must(t, json.Unmarshal(structured, &rep) == nil && len(rep.Conflicts) == 1 && rep.Conflicts[0].Kind == "content", "merge app-2 structured: %s", structured)
	tr.section("4. It merges the first fork (clean) and the second (a conflict)", app.flush())

	out, structured = app.call("conflicts", map[string]any{}, false)
	var cs struct {
		Conflicts []struct{ Path, Kind, Next string }
	}
	must(t, json.Unmarshal(structured, &cs) == nil && len(cs.Conflicts) == 1 && cs.Conflicts[0].Path == "calc.py", "conflicts: %s", structured)
	out = app.ok("read", map[string]any{"path": "calc.py"})
	must(t, strings.Contains(out, "def mul") && !strings.Contains(out, "def div") && strings.Contains(out, "unresolved merge conflicts"), "read during the conflict: %s", out)
	out = app.ok("resolve", map[string]any{"path": "calc.py", "take": "markers"})
	must(t, strings.Contains(out, "no conflict left"), "resolve markers: %s", out)
	out = app.ok("read", map[string]any{"path": "calc.py"})
	must(t, strings.Contains(out, "Sum of a and b") && strings.Contains(out, "<<<<<<< app") && strings.Contains(out, ">>>>>>> app-2"), "markers: %s", out)
	merged := "def add(a, b):\n    \"\"\"Sum of a and b.\"\"\"\n    return a + b\n\n\ndef sub(a, b):\n    return a - b\n\n\n" +
		"def mul(a, b):\n    return a * b\n\n\ndef div(a, b):\n    return a / b\n"
	app.ok("write", map[string]any{"path": "calc.py", "content": merged})
	out = app.ok("conflicts", map[string]any{})
	must(t, out == "no unresolved merge conflicts", "conflicts after resolving: %s", out)
	app.ok("checkpoint", map[string]any{"label": "merged"})
	tr.section("5. The conflict is data: listed, resolved with markers, edited", app.flush())

	out = app.ok("diff", map[string]any{"from": "v1", "summary": true})
	must(t, strings.Contains(out, "modified calc.py") && strings.Contains(out, "added test_calc.py"), "diff from v1: %s", out)
	app.ok("restore", map[string]any{"checkpoint": "merge: before app-2"})
	out = app.ok("read", map[string]any{"path": "calc.py"})
	must(t, strings.Contains(out, "def mul") && !strings.Contains(out, "def div"), "stepped back before the second merge: %s", out)
	app.ok("restore", map[string]any{"checkpoint": "merged"})
	out = app.ok("read", map[string]any{"path": "calc.py"})
	must(t, strings.Contains(out, "def mul") && strings.Contains(out, "def div"), "forward again: %s", out)
	tr.section("6. It steps back to the state before the second merge, and forward again", app.flush())

	// Any step, not only checkpoints: the history names the state each
	// audited call left; the agent goes back to the one after its first
	// merge by ~N.
	out, structured = app.call("history", map[string]any{"limit": 20}, false)
	var hist struct {
		Steps []struct {
			Tool, Back string
			Changed    []string
		}
	}
	must(t, json.Unmarshal(structured, &hist) == nil, "history: %s", structured)
	back := ""
	for _, s := range hist.Steps { // newest first: the last merge listed is the first made
		if s.Tool == "merge" && s.Back != "" {
			back = s.Back
		}
	}
	must(t, strings.HasPrefix(back, "~"), "no merge step with a state in the history: %s", out)
	out = app.ok("diff", map[string]any{"from": back, "summary": true})
	must(t, strings.Contains(out, "modified calc.py") && !strings.Contains(out, "test_calc.py"), "diff from %s: %s", back, out)
	app.ok("restore", map[string]any{"checkpoint": back})
	out = app.ok("read", map[string]any{"path": "calc.py"})
	must(t, strings.Contains(out, "def mul") && !strings.Contains(out, "def div"), "after restoring %s: %s", back, out)
	tr.section("7. It lists its steps and goes back to the one after the first merge", app.flush())

	if *writeTranscript {
		doc := "# A scripted MCP session: fork, work in parallel, merge with a conflict, step back\n\n" +
			"Written by `go test ./cmd/forkspace -run TestMCPMergeTranscript -args -transcript`: three MCP\n" +
			"sessions (the MCP Go SDK's client) of one real `forkspace serve`, on workspace `app` and its two\n" +
			"forks. Every step below is asserted by the test. IDs are renumbered in order of appearance\n" +
			"(times in the history are as recorded).\n" +
			renumber(tr.b.String())
		if err := os.MkdirAll("../../docs/transcripts", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile("../../docs/transcripts/mcp-merge.md", []byte(doc), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// renumber replaces random IDs (checkpoints, workspaces) by stable ones
// in order of appearance, so the transcript changes only when the
// session does.
func renumber(s string) string {
	ids := map[string]string{}
	counts := map[string]int{}
	return regexp.MustCompile(`\b(cp|ws)-[0-9a-z]{16}\b`).ReplaceAllStringFunc(s, func(id string) string {
		if r, ok := ids[id]; ok {
			return r
		}
		kind := id[:2]
		counts[kind]++
		ids[id] = fmt.Sprintf("%s-%d", kind, counts[kind])
		return ids[id]
	})
}
