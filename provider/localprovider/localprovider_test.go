package localprovider_test

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/meta/sqlitemeta"
	"github.com/forkspace/forkspace/provider"
	"github.com/forkspace/forkspace/provider/localprovider"
	"github.com/forkspace/forkspace/provider/providertest"
)

var quiet = slog.New(slog.DiscardHandler)

// openStore opens a real on-disk store in dir and its metadata database,
// shared with the session manager's ref store.
func openStore(t *testing.T, dir string) (*forkspace.Store, provider.RefStore) {
	t.Helper()
	ctx := context.Background()
	db, err := sqlitemeta.Open(ctx, filepath.Join(dir, "meta.db"), sqlitemeta.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	st, err := forkspace.Open(ctx, forkspace.Options{Dir: dir, Meta: db, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	return st, provider.MetaRefs(db)
}

func manager(t *testing.T, st *forkspace.Store, refs provider.RefStore) *provider.Manager {
	t.Helper()
	var reg provider.Registry
	reg.Register(localprovider.New(st, localprovider.Options{Logger: quiet}))
	m := provider.NewManager(provider.ManagerOptions{Registry: &reg, Refs: refs, Logger: quiet})
	t.Cleanup(func() { m.Close(context.Background()) })
	return m
}

func TestDecodeConfig(t *testing.T) {
	p := localprovider.New(nil, localprovider.Options{})
	cfg, err := p.DecodeConfig([]byte(`{"kind":"local","workspace":"w","fork_from":"base@cp"}`))
	if err != nil || cfg.(localprovider.Config) != (localprovider.Config{Workspace: "w", ForkFrom: "base@cp"}) {
		t.Fatalf("DecodeConfig = %+v, %v", cfg, err)
	}
	if _, err := p.DecodeConfig([]byte(`{"kind":"local","token":"secret"}`)); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("unknown field: %v, want fs.ErrInvalid", err)
	}
}

// TestSessionsIsolated is the regression test of the stateless-provider
// rule: two sessions on one provider never see each other's files.
func TestSessionsIsolated(t *testing.T) {
	ctx := context.Background()
	st, refs := openStore(t, t.TempDir())
	defer st.Close()
	m := manager(t, st, refs)
	d := provider.Declaration{Name: "box", Config: localprovider.Config{}}
	a, b := provider.Session{ID: "a"}, provider.Session{ID: "b"}
	write := func(s provider.Session, name string) {
		err := m.Use(ctx, s, d, func(ws provider.Workspace) error {
			return ws.FS().WriteFile(ctx, name, []byte(s.ID), 0o644)
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	write(a, "a.txt")
	write(b, "b.txt")
	for _, c := range []struct {
		s    provider.Session
		mine string
		not  string
	}{{a, "a.txt", "b.txt"}, {b, "b.txt", "a.txt"}} {
		m.Use(ctx, c.s, d, func(ws provider.Workspace) error {
			if data, err := ws.FS().ReadFile(ctx, c.mine); err != nil || string(data) != c.s.ID {
				t.Errorf("session %s reads its %s: %q, %v", c.s.ID, c.mine, data, err)
			}
			if _, err := ws.FS().Stat(ctx, c.not); !errors.Is(err, fs.ErrNotExist) {
				t.Errorf("session %s sees %s: %v", c.s.ID, c.not, err)
			}
			return nil
		})
	}
}

func TestRestartAndSnapshots(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, refs := openStore(t, dir)
	base, err := st.Create(ctx, "base", forkspace.CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	base.WriteFile(ctx, "seed.txt", []byte("seed"), 0o644)
	m := manager(t, st, refs)
	s := provider.Session{ID: "agent-7"}
	d := provider.Declaration{Name: "box", Config: localprovider.Config{Workspace: "task", ForkFrom: "base"},
		Capabilities: &provider.Capabilities{FS: true, Snapshot: true}}
	var cp provider.Checkpoint
	err = m.Use(ctx, s, d, func(ws provider.Workspace) error {
		if _, err := ws.FS().ReadFile(ctx, "seed.txt"); err != nil {
			return err
		}
		if cp, err = ws.Snapshots().Checkpoint(ctx, "start"); err != nil {
			return err
		}
		return ws.FS().WriteFile(ctx, "new.txt", []byte("x"), 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	ref, err := m.Ref(ctx, s, "box")
	if err != nil || strings.Contains(string(ref.Payload), dir) || ref.Capabilities.Shell {
		t.Fatalf("ref %s: %v (must not hold host paths, no shell)", ref.Payload, err)
	}
	m.Close(ctx)
	st.Close()

	st, refs = openStore(t, dir)
	defer st.Close()
	m = manager(t, st, refs)
	err = m.Use(ctx, s, d, func(ws provider.Workspace) error {
		diff, err := ws.Snapshots().Diff(ctx, cp.ID, "", false)
		if err != nil {
			return err
		}
		if len(diff) != 1 || diff[0].Path != "new.txt" || diff[0].Op != "added" {
			t.Errorf("diff since checkpoint = %+v", diff)
		}
		if err := ws.Snapshots().Restore(ctx, "start"); err != nil {
			return err
		}
		if _, err := ws.FS().Stat(ctx, "new.txt"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("after restore: %v", err)
		}
		fork, err := ws.Snapshots().Fork(ctx, "task-try")
		if err != nil || fork.ProviderID != "local" || !fork.Capabilities.Snapshot {
			t.Errorf("fork ref = %+v, %v", fork, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// The ref of a deleted workspace no longer resolves: a permanent failure.
	p := localprovider.New(st, localprovider.Options{Logger: quiet})
	if err := st.Delete(ctx, "task"); err != nil {
		t.Fatal(err)
	}
	_, err = p.Resolve(ctx, ref)
	var fe *provider.FailedError
	if !errors.As(err, &fe) || fe.Transient || !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("resolve deleted: %v, want permanent *FailedError wrapping fs.ErrNotExist", err)
	}
	// Schema versions: v2 is from the future.
	ref.SchemaVersion = provider.Version(2)
	if _, err := p.Resolve(ctx, ref); !errors.As(err, &fe) {
		t.Errorf("resolve v2: %v, want *FailedError", err)
	}
}

func TestShellDeclaredButMissing(t *testing.T) {
	ctx := context.Background()
	st, refs := openStore(t, t.TempDir())
	defer st.Close()
	m := manager(t, st, refs)
	_, err := m.Workspace(ctx, provider.Session{ID: "s"}, provider.Declaration{Name: "box",
		Config: localprovider.Config{}, Capabilities: &provider.Capabilities{Shell: true}})
	var fe *provider.FailedError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "shell") {
		t.Errorf("got %v, want *FailedError naming shell", err)
	}
}

func TestConformance(t *testing.T) {
	st, _ := openStore(t, t.TempDir())
	defer st.Close()
	providertest.Run(t, providertest.Subject{
		Provider:   localprovider.New(st, localprovider.Options{Logger: quiet}),
		PerSession: func() provider.Config { return localprovider.Config{} },
	})
}

// TestSessionWorkspaceInjective: distinct session IDs never share a
// workspace (a digest name cannot be a direct one), and an empty ID is
// refused by the mapping and by Open.
func TestSessionWorkspaceInjective(t *testing.T) {
	seen := map[string]string{}
	for _, id := range []string{"x/../y", "fec01a9e6f563b4475fb0014", "a", "A", "a b", "a/b",
		strings.Repeat("z", 56), strings.Repeat("z", 57), "é", "_x", "-x"} {
		name, err := localprovider.SessionWorkspace(id)
		if err != nil {
			t.Fatalf("SessionWorkspace(%q): %v", id, err)
		}
		if err := forkspace.ValidName(name); err != nil {
			t.Errorf("SessionWorkspace(%q) = %q: %v", id, name, err)
		}
		if other, dup := seen[name]; dup {
			t.Errorf("sessions %q and %q share workspace %q", other, id, name)
		}
		seen[name] = id
	}
	// The digest of "x/../y" taken as an ID is a direct name, not the same.
	digest, _ := localprovider.SessionWorkspace("x/../y")
	direct, _ := localprovider.SessionWorkspace(strings.TrimPrefix(digest, "session_"))
	if digest == direct {
		t.Errorf("digest name %q is also a direct name", digest)
	}
	if _, err := localprovider.SessionWorkspace(""); !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("empty ID: %v, want fs.ErrInvalid", err)
	}
	st, _ := openStore(t, t.TempDir())
	defer st.Close()
	p := localprovider.New(st, localprovider.Options{Logger: quiet})
	_, _, err := p.Open(context.Background(), localprovider.Config{}, provider.Session{}, nil)
	var fe *provider.FailedError
	if !errors.As(err, &fe) || !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("Open with an empty session: %v, want *FailedError wrapping fs.ErrInvalid", err)
	}
	if ws, _ := st.List(context.Background()); len(ws) != 0 {
		t.Errorf("refused open left workspaces %v", ws)
	}
}

// TestRefSchemaSpellings: the seed's "schemaVersion" is read (so v99 is
// refused, not taken for a legacy ref), unknown keys are refused, and at
// version 1 the refusal names exactly what is accepted.
func TestRefSchemaSpellings(t *testing.T) {
	ctx := context.Background()
	st, _ := openStore(t, t.TempDir())
	defer st.Close()
	p := localprovider.New(st, localprovider.Options{Logger: quiet})
	_, ref, err := p.Open(ctx, localprovider.Config{}, provider.Session{ID: "s"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	payload := string(ref.Payload)
	decode := func(js string) (provider.Ref, error) {
		var r provider.Ref
		return r, json.Unmarshal([]byte(js), &r)
	}
	seed, err := decode(`{"provider_id":"local","ref":` + payload + `,"capabilities":{"fs":true},"schemaVersion":99}`)
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Resolve(ctx, seed)
	var fe *provider.FailedError
	if !errors.As(err, &fe) || !strings.Contains(err.Error(), "99") {
		t.Errorf("resolve a seed-spelled v99 ref: %v, want *FailedError naming 99", err)
	}
	if seed, err = decode(`{"provider_id":"local","ref":` + payload + `,"schemaVersion":1}`); err != nil || seed.SchemaVersion == nil || *seed.SchemaVersion != 1 {
		t.Errorf("seed-spelled v1: %+v %v", seed, err)
	}
	for _, js := range []string{
		`{"provider_id":"local","ref":{},"schema_version":1,"extra":true}`,
		`{"provider_id":"local","ref":{},"capabilities":{"fs":true,"gpu":true}}`,
		`{"provider_id":"local","ref":{},"schema_version":1,"schemaVersion":2}`,
	} {
		if _, err := decode(js); !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("decode %s: %v, want fs.ErrInvalid", js, err)
		}
	}
	// The current version is 2 (the seed's built-in providers are at 2):
	// 1 and 2 and none are read, anything else refused naming them.
	for _, v := range []int{0, 3, -1} {
		ref.SchemaVersion = provider.Version(v)
		_, err := p.Resolve(ctx, ref)
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), "reads v1, v2 or none (legacy)") {
			t.Errorf("resolve v%d: %v, want a refusal naming v1, v2 or none", v, err)
		}
	}
	for _, v := range []int{1, 2} {
		ref.SchemaVersion = provider.Version(v)
		if _, err := p.Resolve(ctx, ref); err != nil {
			t.Errorf("resolve v%d: %v", v, err)
		}
	}
}
