package tools_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/provider"
	"github.com/forkspace/forkspace/provider/localprovider"
	"github.com/forkspace/forkspace/provider/memprovider"
	"github.com/forkspace/forkspace/tools"
)

// env is one workspace (of a fresh in-memory store) and a tool set.
type env struct {
	t   *testing.T
	ws  provider.Workspace
	set *tools.Set
}

func newEnv(t *testing.T, opts tools.Options) *env {
	t.Helper()
	e, _ := newStoreEnv(t, "test", func(*forkspace.Store) tools.Options { return opts })
	return e
}

// newStoreEnv is newEnv for session session, with the tool options made
// from the in-memory store (its audit log, its feed); it returns the store
// too.
func newStoreEnv(t *testing.T, session string, opts func(*forkspace.Store) tools.Options) (*env, *forkspace.Store) {
	t.Helper()
	ctx := context.Background()
	p, err := memprovider.New(ctx, memprovider.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	ws, _, err := p.Open(ctx, memprovider.Config{}, provider.Session{ID: session}, nil)
	if err != nil {
		t.Fatal(err)
	}
	return &env{t: t, ws: ws, set: tools.New(opts(p.Store()))}, p.Store()
}

// sessions returns a function that opens workspace name (made on first
// use) of one in-memory store for a session of that name.
func sessions(t *testing.T) func(name string) provider.Workspace {
	t.Helper()
	ctx := context.Background()
	p, err := memprovider.New(ctx, memprovider.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return func(name string) provider.Workspace {
		ws, _, err := p.Open(ctx, memprovider.Config{Config: localprovider.Config{Workspace: name}}, provider.Session{ID: name}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return ws
	}
}

// call runs a tool with args given as a Go value.
func (e *env) call(name string, args any) tools.Result {
	e.t.Helper()
	data, err := json.Marshal(args)
	if err != nil {
		e.t.Fatal(err)
	}
	return e.set.Call(context.Background(), tools.Direct(e.ws), name, data)
}

// ok runs a tool that must succeed and returns its text.
func (e *env) ok(name string, args any) string {
	e.t.Helper()
	r := e.call(name, args)
	if r.IsError {
		e.t.Fatalf("%s %v: unexpected error: %s", name, args, r.Text)
	}
	return r.Text
}

// fails runs a tool that must fail with a message containing each of want.
func (e *env) fails(name string, args any, want ...string) string {
	e.t.Helper()
	r := e.call(name, args)
	if !r.IsError {
		e.t.Fatalf("%s %v: succeeded (%q), want an error", name, args, r.Text)
	}
	for _, w := range want {
		if !strings.Contains(r.Text, w) {
			e.t.Errorf("%s %v: error %q does not contain %q", name, args, r.Text, w)
		}
	}
	return r.Text
}

// put writes a file directly.
func (e *env) put(name, content string) {
	e.t.Helper()
	ctx := context.Background()
	if i := strings.LastIndexByte(name, '/'); i > 0 {
		if err := e.ws.FS().MkdirAll(ctx, name[:i], 0o755); err != nil {
			e.t.Fatal(err)
		}
	}
	if err := e.ws.FS().WriteFile(ctx, name, []byte(content), 0o644); err != nil {
		e.t.Fatal(err)
	}
}

// get reads a file directly.
func (e *env) get(name string) string {
	e.t.Helper()
	data, err := e.ws.FS().ReadFile(context.Background(), name)
	if err != nil {
		e.t.Fatal(err)
	}
	return string(data)
}

type M = map[string]any

// callers returns functions calling a tool of set in a session's
// workspace: call returns the result, ok fails the test on an error.
func callers(t *testing.T, set *tools.Set) (call, ok func(ws provider.Workspace, name, args string) tools.Result) {
	call = func(ws provider.Workspace, name, args string) tools.Result {
		t.Helper()
		return set.Call(context.Background(), tools.Direct(ws), name, json.RawMessage(args))
	}
	ok = func(ws provider.Workspace, name, args string) tools.Result {
		t.Helper()
		r := call(ws, name, args)
		if r.IsError {
			t.Fatalf("%s %s: %s", name, args, r.Text)
		}
		return r
	}
	return call, ok
}
