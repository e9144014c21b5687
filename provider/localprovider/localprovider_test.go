package localprovider_test

import (
	"context"
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
