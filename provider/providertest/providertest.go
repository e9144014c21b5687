package providertest

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"testing"

	"github.com/forkspace/forkspace/provider"
)

// Subject is a provider under test.
type Subject struct {
	Provider provider.Provider
	// PerSession returns a config giving each session its own workspace.
	PerSession func() provider.Config
}

// Run runs the suite against s.
func Run(t *testing.T, s Subject) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s Subject)
	}{
		{"RefRoundTrip", testRefRoundTrip},
		{"CapabilitiesHonest", testCapabilitiesHonest},
		{"SessionsIsolated", testSessionsIsolated},
		{"ForeignRef", testForeignRef},
		{"FutureSchema", testFutureSchema},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) { tc.fn(t, s) })
	}
}

func open(t *testing.T, s Subject, session string, declared *provider.Capabilities) (provider.Workspace, provider.Ref) {
	t.Helper()
	ws, ref, err := s.Provider.Open(context.Background(), s.PerSession(), provider.Session{ID: session}, declared)
	if err != nil {
		t.Fatalf("open for session %s: %v", session, err)
	}
	t.Cleanup(func() { ws.Close(context.Background()) })
	return ws, ref
}

func testRefRoundTrip(t *testing.T, s Subject) {
	ctx := context.Background()
	ws, ref := open(t, s, "round-trip", nil)
	if ref.ProviderID != s.Provider.ID() {
		t.Errorf("ref provider %q, want %q", ref.ProviderID, s.Provider.ID())
	}
	if err := ws.FS().WriteFile(ctx, "kept.txt", []byte("kept"), 0o644); err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(ref)
	if err != nil {
		t.Fatal(err)
	}
	var back provider.Ref
	if err := json.Unmarshal(data, &back); err != nil {
		t.Fatal(err)
	}
	ws2, err := s.Provider.Resolve(ctx, back)
	if err != nil {
		t.Fatalf("resolve %s: %v", data, err)
	}
	defer ws2.Close(ctx)
	if got, err := ws2.FS().ReadFile(ctx, "kept.txt"); err != nil || string(got) != "kept" {
		t.Errorf("resolved workspace reads %q, %v", got, err)
	}
}

func testCapabilitiesHonest(t *testing.T, s Subject) {
	for _, declared := range []*provider.Capabilities{nil, {FS: true}} {
		ws, ref := open(t, s, "caps", declared)
		built := provider.Capabilities{FS: ws.FS() != nil, Shell: ws.Shell() != nil, Snapshot: ws.Snapshots() != nil}
		if built != ref.Capabilities {
			t.Errorf("declared %+v: ref says %+v, workspace has %+v", declared, ref.Capabilities, built)
		}
		if declared != nil && !ref.Capabilities.Covers(*declared) {
			t.Errorf("declared %+v not covered by %+v", declared, ref.Capabilities)
		}
	}
}

func testSessionsIsolated(t *testing.T, s Subject) {
	ctx := context.Background()
	a, _ := open(t, s, "alice", nil)
	b, _ := open(t, s, "bob", nil)
	if err := a.FS().WriteFile(ctx, "secret.txt", []byte("alice"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := b.FS().WriteFile(ctx, "other.txt", []byte("bob"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := b.FS().Stat(ctx, "secret.txt"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("bob sees alice's file: %v", err)
	}
	if _, err := a.FS().Stat(ctx, "other.txt"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("alice sees bob's file: %v", err)
	}
}

func wantPermanent(t *testing.T, what string, err error) {
	t.Helper()
	var fe *provider.FailedError
	if !errors.As(err, &fe) || fe.Transient {
		t.Errorf("%s: %v, want a permanent *provider.FailedError", what, err)
	}
}

func testForeignRef(t *testing.T, s Subject) {
	_, ref := open(t, s, "foreign", nil)
	ref.ProviderID = "not-" + ref.ProviderID
	_, err := s.Provider.Resolve(context.Background(), ref)
	wantPermanent(t, "resolve a foreign ref", err)
}

func testFutureSchema(t *testing.T, s Subject) {
	_, ref := open(t, s, "future", nil)
	ref.SchemaVersion = provider.Version(1 << 20)
	_, err := s.Provider.Resolve(context.Background(), ref)
	wantPermanent(t, "resolve a ref from a future schema", err)
}
