package provider_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/forkspace/forkspace/meta/sqlitemeta"
	"github.com/forkspace/forkspace/provider"
)

func newManager(t *testing.T, p *fakeProvider, refs provider.RefStore, sl *sleeps) *provider.Manager {
	t.Helper()
	var reg provider.Registry
	if err := reg.Register(p); err != nil {
		t.Fatal(err)
	}
	if sl == nil {
		sl = &sleeps{}
	}
	m := provider.NewManager(provider.ManagerOptions{Registry: &reg, Refs: refs, Sleep: sl.sleep, Logger: slog.New(slog.DiscardHandler)})
	t.Cleanup(func() { m.Close(context.Background()) })
	return m
}

func decl(p *fakeProvider, caps *provider.Capabilities) provider.Declaration {
	return provider.Declaration{Name: "box", Config: fakeConfig{Kind_: p.id}, Capabilities: caps}
}

var session = provider.Session{ID: "s1"}

func TestRegistryUnknownKind(t *testing.T) {
	var reg provider.Registry
	reg.Register(&fakeProvider{id: "alpha"})
	reg.Register(&fakeProvider{id: "beta"})
	if err := reg.Register(&fakeProvider{id: "beta"}); !errors.Is(err, fs.ErrExist) {
		t.Errorf("register twice: %v, want fs.ErrExist", err)
	}
	_, err := reg.DecodeConfig([]byte(`{"kind":"gamma"}`))
	if !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), "alpha, beta") {
		t.Errorf("unknown kind: %v, want fs.ErrNotExist listing alpha, beta", err)
	}
	for _, bad := range []string{`{}`, `[]`, `{"kind":`} {
		if _, err := reg.DecodeConfig([]byte(bad)); !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("DecodeConfig(%s): %v, want fs.ErrInvalid", bad, err)
		}
	}
	cfg, err := reg.DecodeConfig([]byte(`{"kind":"alpha"}`))
	if err != nil || cfg.Kind() != "alpha" {
		t.Errorf("DecodeConfig(alpha) = %v, %v", cfg, err)
	}
	if got := reg.Kinds(); !slices.Equal(got, []string{"alpha", "beta"}) {
		t.Errorf("Kinds() = %v", got)
	}
}

func TestCheckSchemaVersion(t *testing.T) {
	tests := []struct {
		name    string
		v       *int
		ok      bool
		migrate bool
	}{
		{"legacy", nil, true, false},
		{"previous", provider.Version(4), true, true},
		{"current", provider.Version(5), true, false},
		{"newer", provider.Version(6), false, false},
		{"too old", provider.Version(3), false, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			log := slog.New(slog.NewTextHandler(&buf, nil))
			err := provider.CheckSchemaVersion(tc.v, "p", 5, log)
			var fe *provider.FailedError
			switch {
			case tc.ok && err != nil:
				t.Fatalf("got %v, want nil", err)
			case !tc.ok && (!errors.As(err, &fe) || fe.Transient || !strings.Contains(err.Error(), "v4, v5")):
				t.Fatalf("got %v, want a permanent *FailedError naming v4, v5", err)
			}
			if logged := strings.Contains(buf.String(), "migrating ref from v4 to v5"); logged != tc.migrate {
				t.Errorf("migration logged = %v, want %v (log %q)", logged, tc.migrate, buf.String())
			}
		})
	}
}

func TestCapabilityMismatch(t *testing.T) {
	ctx := context.Background()
	want := &provider.Capabilities{FS: true, Shell: true}
	t.Run("open: not in the ref", func(t *testing.T) {
		p := &fakeProvider{id: "fake", caps: provider.Capabilities{FS: true}}
		m := newManager(t, p, nil, nil)
		_, err := m.Workspace(ctx, session, decl(p, want))
		var fe *provider.FailedError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), "shell") {
			t.Fatalf("got %v, want *FailedError naming shell", err)
		}
		if !p.lastWorkspace.closed {
			t.Error("the mismatched workspace was not closed")
		}
		if _, err2 := m.Workspace(ctx, session, decl(p, want)); err2 == nil || err2.Error() != err.Error() {
			t.Errorf("second call: %v, want the same failure", err2)
		}
		if opens, _ := p.counts(); opens != 1 {
			t.Errorf("opens = %d, want 1 (failed state is sticky)", opens)
		}
	})
	t.Run("open: module not built", func(t *testing.T) {
		// The ref claims fs, but the workspace has no fs module.
		p := &fakeProvider{id: "fake", refCaps: &provider.Capabilities{FS: true}}
		m := newManager(t, p, nil, nil)
		_, err := m.Workspace(ctx, session, decl(p, &provider.Capabilities{FS: true}))
		if !strings.Contains(fmtErr(err), "module not built") {
			t.Fatalf("got %v, want a module-not-built failure", err)
		}
	})
	t.Run("resolve", func(t *testing.T) {
		refs := provider.MetaRefs(openMeta(t))
		p := &fakeProvider{id: "fake", caps: provider.Capabilities{FS: true, Shell: true}}
		m := newManager(t, p, refs, nil)
		if _, err := m.Workspace(ctx, session, decl(p, want)); err != nil {
			t.Fatal(err)
		}
		m.Close(ctx)
		// After a restart the provider builds less than the agent declares.
		p2 := &fakeProvider{id: "fake", caps: provider.Capabilities{FS: true}}
		m2 := newManager(t, p2, refs, nil)
		_, err := m2.Workspace(ctx, session, decl(p2, want))
		var fe *provider.FailedError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), "shell") {
			t.Fatalf("got %v, want *FailedError naming shell", err)
		}
		if opens, resolves := p2.counts(); opens != 0 || resolves != 1 {
			t.Errorf("opens, resolves = %d, %d; want 0, 1", opens, resolves)
		}
	})
}

func fmtErr(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

func TestTransientRetry(t *testing.T) {
	ctx := context.Background()
	p := &fakeProvider{id: "fake", caps: provider.Capabilities{FS: true}, failOpens: 2, transient: true}
	sl := &sleeps{}
	m := newManager(t, p, nil, sl)
	if _, err := m.Workspace(ctx, session, decl(p, nil)); err != nil {
		t.Fatalf("third attempt should succeed: %v", err)
	}
	if opens, _ := p.counts(); opens != 3 {
		t.Errorf("opens = %d, want 3", opens)
	}
	if want := []time.Duration{2 * time.Second, 4 * time.Second}; !slices.Equal(sl.d, want) {
		t.Errorf("backoff = %v, want %v", sl.d, want)
	}
	var total time.Duration
	for _, d := range sl.d {
		total += d
	}
	if total > provider.DefaultMaxWait {
		t.Errorf("waited %v, more than %v", total, provider.DefaultMaxWait)
	}

	t.Run("exhausted", func(t *testing.T) {
		p := &fakeProvider{id: "fake", caps: provider.Capabilities{FS: true}, failOpens: 10, transient: true}
		sl := &sleeps{}
		m := newManager(t, p, nil, sl)
		_, err := m.Workspace(ctx, session, decl(p, nil))
		var fe *provider.FailedError
		if !errors.As(err, &fe) || !fe.Transient {
			t.Fatalf("got %v, want the transient *FailedError", err)
		}
		if opens, _ := p.counts(); opens != provider.DefaultAttempts || len(sl.d) != 2 {
			t.Errorf("opens = %d, sleeps = %v; want %d opens, 2 sleeps", opens, sl.d, provider.DefaultAttempts)
		}
	})
	t.Run("permanent", func(t *testing.T) {
		p := &fakeProvider{id: "fake", caps: provider.Capabilities{FS: true}, failOpens: 1}
		sl := &sleeps{}
		m := newManager(t, p, nil, sl)
		_, err := m.Workspace(ctx, session, decl(p, nil))
		var fe *provider.FailedError
		if !errors.As(err, &fe) || fe.Transient {
			t.Fatalf("got %v, want a permanent *FailedError", err)
		}
		if opens, _ := p.counts(); opens != 1 || len(sl.d) != 0 {
			t.Errorf("opens = %d, sleeps = %v; want 1 open, no sleep", opens, sl.d)
		}
	})
}

func TestEvictionReresolvesOnce(t *testing.T) {
	ctx := context.Background()
	p := &fakeProvider{id: "fake", caps: provider.Capabilities{FS: true}}
	m := newManager(t, p, nil, nil)
	d := decl(p, nil)
	if err := m.Use(ctx, session, d, func(ws provider.Workspace) error { return ws.(*fakeWorkspace).call() }); err != nil {
		t.Fatal(err)
	}
	first := p.lastWorkspace
	first.evicted = true
	calls := 0
	err := m.Use(ctx, session, d, func(ws provider.Workspace) error {
		calls++
		return ws.(*fakeWorkspace).call()
	})
	if err != nil || calls != 2 {
		t.Fatalf("Use after eviction: %v after %d calls, want success on the 2nd", err, calls)
	}
	if opens, resolves := p.counts(); opens != 1 || resolves != 1 {
		t.Errorf("opens, resolves = %d, %d; want 1, 1", opens, resolves)
	}
	if !first.closed {
		t.Error("evicted workspace not closed")
	}
	// A workspace evicted again right after re-resolving: the error comes
	// back, no second re-resolve.
	calls = 0
	err = m.Use(ctx, session, d, func(ws provider.Workspace) error {
		calls++
		ws.(*fakeWorkspace).evicted = true
		return ws.(*fakeWorkspace).call()
	})
	var ev *provider.EvictedError
	if !errors.As(err, &ev) || calls != 2 {
		t.Errorf("double eviction: %v after %d calls, want *EvictedError after 2", err, calls)
	}
	if _, resolves := p.counts(); resolves != 2 {
		t.Errorf("resolves = %d, want 2", resolves)
	}
}

func TestRefJSONRoundTrip(t *testing.T) {
	ref := provider.Ref{ProviderID: "local", Payload: json.RawMessage(`{"workspace_id":"ws-1"}`),
		Capabilities: provider.Capabilities{FS: true, Snapshot: true}, SchemaVersion: provider.Version(1)}
	data, err := json.Marshal(ref)
	if err != nil {
		t.Fatal(err)
	}
	var back provider.Ref
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	again, _ := json.Marshal(back)
	if !bytes.Equal(data, again) || *back.SchemaVersion != 1 || !back.Capabilities.Snapshot {
		t.Errorf("round trip: %s became %s", data, again)
	}
	var legacy provider.Ref
	json.Unmarshal([]byte(`{"provider_id":"local","ref":{},"capabilities":{"fs":true}}`), &legacy)
	if legacy.SchemaVersion != nil {
		t.Errorf("legacy ref has schema version %d", *legacy.SchemaVersion)
	}
}

func TestRestartResolvesPersistedRef(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "meta.db")
	db, err := sqlitemeta.Open(ctx, path, sqlitemeta.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	p := &fakeProvider{id: "fake", caps: provider.Capabilities{FS: true}}
	m := newManager(t, p, provider.MetaRefs(db), nil)
	if _, err := m.Workspace(ctx, session, decl(p, nil)); err != nil {
		t.Fatal(err)
	}
	m.Close(ctx)
	db.Close()

	db, err = sqlitemeta.Open(ctx, path, sqlitemeta.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	p2 := &fakeProvider{id: "fake", caps: provider.Capabilities{FS: true}}
	m2 := newManager(t, p2, provider.MetaRefs(db), nil)
	if _, err := m2.Workspace(ctx, session, decl(p2, nil)); err != nil {
		t.Fatal(err)
	}
	if opens, resolves := p2.counts(); opens != 0 || resolves != 1 {
		t.Errorf("after restart: opens, resolves = %d, %d; want 0, 1", opens, resolves)
	}
	// Session end drops the refs: the next use opens afresh.
	if err := m2.CloseSession(ctx, session.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := m2.Ref(ctx, session, "box"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("ref after CloseSession: %v, want fs.ErrNotExist", err)
	}
	if !p2.lastWorkspace.closed {
		t.Error("CloseSession did not close the workspace")
	}
}

func TestManagerClosed(t *testing.T) {
	p := &fakeProvider{id: "fake", caps: provider.Capabilities{FS: true}}
	m := newManager(t, p, nil, nil)
	m.Close(context.Background())
	if _, err := m.Workspace(context.Background(), session, decl(p, nil)); !errors.Is(err, fs.ErrClosed) {
		t.Errorf("after Close: %v, want fs.ErrClosed", err)
	}
}
