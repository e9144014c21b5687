package hostdirprovider_test

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/forkspace/forkspace/provider"
	"github.com/forkspace/forkspace/provider/hostdirprovider"
	"github.com/forkspace/forkspace/provider/providertest"
)

func TestHostDir(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	outside := filepath.Join(t.TempDir(), "outside.txt")
	os.WriteFile(outside, []byte("host"), 0o644)
	p := hostdirprovider.New(nil)
	var reg provider.Registry
	reg.Register(p)
	cfg, err := reg.DecodeConfig([]byte(`{"kind":"hostdir","dir":"` + dir + `","per_session":true}`))
	if err != nil {
		t.Fatal(err)
	}
	m := provider.NewManager(provider.ManagerOptions{Registry: &reg})
	defer m.Close(ctx)
	d := provider.Declaration{Name: "box", Config: cfg, Capabilities: &provider.Capabilities{FS: true}}
	err = m.Use(ctx, provider.Session{ID: "a"}, d, func(ws provider.Workspace) error {
		f := ws.FS()
		if err := f.MkdirAll(ctx, "src/pkg", 0o755); err != nil {
			return err
		}
		if err := f.WriteFile(ctx, "src/pkg/a.go", []byte("package pkg"), 0o644); err != nil {
			return err
		}
		if err := f.Rename(ctx, "src/pkg/a.go", "src/b.go"); err != nil {
			return err
		}
		entries, err := f.ReadDir(ctx, "src")
		if err != nil || len(entries) != 2 || entries[0].Name() != "b.go" {
			t.Errorf("ReadDir(src) = %v, %v", entries, err)
		}
		// Escapes are refused.
		if _, err := f.ReadFile(ctx, "../../"+filepath.Base(filepath.Dir(outside))+"/outside.txt"); err == nil {
			t.Error("read through .. escaped the directory")
		}
		if err := os.Symlink(outside, filepath.Join(dir, "session-a", "link")); err != nil {
			return err
		}
		if _, err := f.ReadFile(ctx, "link"); err == nil {
			t.Error("read through a symlink escaped the directory")
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "session-a", "src", "b.go")); err != nil {
		t.Errorf("file not on the host: %v", err)
	}
	// Another session has its own directory.
	m.Use(ctx, provider.Session{ID: "b"}, d, func(ws provider.Workspace) error {
		if _, err := ws.FS().Stat(ctx, "src"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("session b sees a's files: %v", err)
		}
		return nil
	})
	// Snapshots are not offered.
	_, err = m.Workspace(ctx, provider.Session{ID: "c"}, provider.Declaration{Name: "box", Config: cfg,
		Capabilities: &provider.Capabilities{FS: true, Snapshot: true}})
	var fe *provider.FailedError
	if !errors.As(err, &fe) {
		t.Errorf("snapshot declared: %v, want *FailedError", err)
	}
}

func TestConformance(t *testing.T) {
	dir := t.TempDir()
	providertest.Run(t, providertest.Subject{
		Provider:   hostdirprovider.New(nil),
		PerSession: func() provider.Config { return hostdirprovider.Config{Dir: dir, PerSession: true} },
	})
}
