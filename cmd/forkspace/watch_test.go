package main

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/forkspace/forkspace/audit"
	"github.com/forkspace/forkspace/httpapi"
)

// events decodes watch --json output.
func events(t *testing.T, out string) []httpapi.Event {
	t.Helper()
	var es []httpapi.Event
	for l := range strings.Lines(out) {
		var e httpapi.Event
		if err := json.Unmarshal([]byte(l), &e); err != nil {
			t.Fatalf("watch --json line %q: %v", l, err)
		}
		es = append(es, e)
	}
	return es
}

func summary(es []httpapi.Event) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Workspace+" "+e.Tool+" "+strings.Join(e.Changed, ","))
	}
	return out
}

// TestWatchCommand: without a server watch prints the history after
// --since (filtered by workspace and path) and exits; with one it
// prints the changes made through the server as they come.
func TestWatchCommand(t *testing.T) {
	c := newCLI(t)
	c.ok(nil, "workspace", "create", "a")
	c.ok(nil, "workspace", "create", "b")
	c.ok(nil, "-w", "a", "mkdir", "src")
	c.ok([]byte("1"), "-w", "a", "put", "-", "src/x.go")
	c.ok([]byte("2"), "-w", "b", "put", "-", "y")
	c.ok([]byte("3"), "-w", "a", "put", "-", "doc.md")

	got := summary(events(t, c.ok(nil, "watch", "a", "--since", "0", "--json")))
	if want := "a cli.mkdir src|a cli.write src/x.go|a cli.write doc.md"; strings.Join(got, "|") != want {
		t.Errorf("watch a --since 0: %q, want %s", got, want)
	}
	got = summary(events(t, c.ok(nil, "watch", "a", "src", "--since", "0", "--json")))
	if want := "a cli.mkdir src|a cli.write src/x.go"; strings.Join(got, "|") != want {
		t.Errorf("watch a src: %q, want %s", got, want)
	}
	if out := c.ok(nil, "watch", "--all", "--since", "0"); !strings.Contains(out, "b  cli  cli.write  ok  y") {
		t.Errorf("watch --all: %s", out)
	}
	if out := c.ok(nil, "watch", "a"); out != "" {
		t.Errorf("watch a from now without a server: %q", out)
	}
	c.fails(exitUsage, nil, "watch")
	c.fails(exitUsage, nil, "watch", "a", "--since", "-2")
	c.fails(exitNotFound, nil, "watch", "missing")

	var last []audit.Entry
	c.json(&last, "log", "--limit", "1")
	_, stop := serve(t, c.store)
	defer stop()
	done := make(chan string)
	go func() {
		out, errs, code := c.run(nil, "watch", "a", "--since", strconv.FormatInt(last[0].Seq, 10), "--count", "2", "--json")
		if code != 0 {
			t.Errorf("watch through the server: exit %d: %s", code, errs)
		}
		done <- out
	}()
	c.ok([]byte("4"), "-w", "b", "put", "-", "z")
	c.ok([]byte("5"), "-w", "a", "put", "-", "live-1")
	c.ok([]byte("6"), "-w", "a", "put", "-", "live-2")
	got = summary(events(t, <-done))
	if want := "a rest.write live-1|a rest.write live-2"; strings.Join(got, "|") != want {
		t.Errorf("watch through the server: %q, want %s", got, want)
	}
}
