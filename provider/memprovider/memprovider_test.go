package memprovider_test

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"testing"

	"github.com/forkspace/forkspace/provider"
	"github.com/forkspace/forkspace/provider/memprovider"
	"github.com/forkspace/forkspace/provider/providertest"
)

func TestMemory(t *testing.T) {
	ctx := context.Background()
	quiet := slog.New(slog.DiscardHandler)
	p, err := memprovider.New(ctx, memprovider.Options{Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var reg provider.Registry
	reg.Register(p)
	cfg, err := reg.DecodeConfig([]byte(`{"kind":"memory"}`))
	if err != nil || cfg.Kind() != "memory" {
		t.Fatalf("DecodeConfig = %v, %v", cfg, err)
	}
	m := provider.NewManager(provider.ManagerOptions{Registry: &reg, Logger: quiet})
	defer m.Close(ctx)
	d := provider.Declaration{Name: "box", Config: cfg}
	a, b := provider.Session{ID: "a"}, provider.Session{ID: "b"}
	if err := m.Use(ctx, a, d, func(ws provider.Workspace) error {
		return ws.FS().WriteFile(ctx, "secret.txt", []byte("a"), 0o644)
	}); err != nil {
		t.Fatal(err)
	}
	// Isolation between sessions on one provider.
	m.Use(ctx, b, d, func(ws provider.Workspace) error {
		if _, err := ws.FS().Stat(ctx, "secret.txt"); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("session b sees a's file: %v", err)
		}
		return nil
	})
	// A ref resolves within the process, not in another store.
	ref, err := m.Ref(ctx, a, "box")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.Resolve(ctx, ref); err != nil {
		t.Errorf("resolve in process: %v", err)
	}
	other, _ := memprovider.New(ctx, memprovider.Options{Logger: quiet})
	defer other.Close()
	var fe *provider.FailedError
	if _, err := other.Resolve(ctx, ref); !errors.As(err, &fe) || fe.Transient {
		t.Errorf("resolve in another store: %v, want a permanent *FailedError", err)
	}
}

func TestConformance(t *testing.T) {
	p, err := memprovider.New(context.Background(), memprovider.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	providertest.Run(t, providertest.Subject{
		Provider:   p,
		PerSession: func() provider.Config { return memprovider.Config{} },
	})
}
