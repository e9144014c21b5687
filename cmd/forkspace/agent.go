package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/execpolicy"
	"github.com/forkspace/forkspace/mcpserver"
	"github.com/forkspace/forkspace/meta/sqlitemeta"
	"github.com/forkspace/forkspace/provider"
	"github.com/forkspace/forkspace/provider/localprovider"
	"github.com/forkspace/forkspace/sandbox"
	"github.com/forkspace/forkspace/tools"
)

// agentFlags are the tool options shared by mcp and serve.
type agentFlags struct {
	readOnly       bool
	autoCheckpoint bool
	network        string // execpolicy.ParseNetwork syntax
	execRoot       bool
	execMode       string // sandbox.ParseMode syntax
	// limits are the server's limits of every exec (requests may only
	// ask for less); runs bounds the execs running at once.
	limits limitFlags
	runs   int
}

// agent opens the store (creating it if needed) and wires the MCP server:
// the local provider over the store with exec in the bubblewrap sandbox, a
// session manager persisting refs in the store's database, and the tools
// recording to the audit log.
func (a *app) agent(ctx context.Context, f agentFlags) (*mcpserver.Server, *provider.Manager, error) {
	if a.st != nil {
		return nil, nil, fmt.Errorf("open store: already open")
	}
	network, err := execpolicy.ParseNetwork(f.network)
	if err != nil {
		return nil, nil, usage("--network: %v", err)
	}
	mode, err := sandbox.ParseMode(f.execMode)
	if err != nil {
		return nil, nil, usage("--exec-mode: %v", err)
	}
	log := slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	if err := os.MkdirAll(a.storeDir, 0o700); err != nil {
		return nil, nil, fmt.Errorf("open store: %w", err)
	}
	stOpts, err := a.storeOptions(ctx, log)
	if err == nil && stOpts.Meta == nil {
		stOpts.Meta, err = sqlitemeta.Open(ctx, filepath.Join(a.storeDir, "meta.db"), sqlitemeta.Options{Logger: log})
	}
	if err != nil {
		return nil, nil, fmt.Errorf("open store %s: %w", a.storeDir, err)
	}
	db := stOpts.Meta
	st, err := forkspace.Open(ctx, stOpts)
	if err != nil {
		db.Close()
		return nil, nil, err
	}
	a.st = st
	limits, env, err := f.limits.limits()
	if err != nil {
		return nil, nil, err
	}
	opts := sandbox.Options{Network: network, Root: f.execRoot, Mode: mode, Timeout: f.limits.timeout, Limits: limits, MaxLimits: limits, Env: env, LockEnv: slices.Collect(maps.Keys(env))}
	if f.runs > 0 {
		opts.Runs = sandbox.NewLimiter(f.runs)
	}
	a.execOpts = opts
	var reg provider.Registry
	// exec runs in the bubblewrap sandbox; the tools record it in the
	// audit log (with its changed paths), so the shell itself does not.
	shell := func(_ context.Context, w *forkspace.Workspace) (provider.Shell, error) {
		return sandbox.New(w, opts), nil
	}
	if err := reg.Register(localprovider.New(st, localprovider.Options{Logger: log, Shell: shell})); err != nil {
		return nil, nil, err
	}
	m := provider.NewManager(provider.ManagerOptions{Registry: &reg, Refs: provider.MetaRefs(db), Logger: log})
	srv := mcpserver.New(mcpserver.Options{
		Manager: m,
		Config:  func(name string) provider.Config { return localprovider.Config{Workspace: name} },
		Tools:   tools.Options{ReadOnly: f.readOnly, AutoCheckpoint: f.autoCheckpoint, Recorder: st.AuditLog(), Feed: st.Feed()},
		Logger:  log,
		// A session naming no workspace works in one of its own, deleted
		// when it ends (if a tool call made it).
		Discard: func(ctx context.Context, session string) error {
			name, err := localprovider.SessionWorkspace(session)
			if err == nil {
				err = st.Delete(ctx, name)
			}
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		},
	})
	return srv, m, nil
}
