package tools

import (
	"context"

	"github.com/forkspace/forkspace/provider"
)

// Target is the workspace tools act on. Use runs fn with the live
// workspace; an implementation may run fn again after re-resolving an
// evicted workspace.
type Target interface {
	Use(ctx context.Context, fn func(provider.Workspace) error) error
}

// Direct is a Target over a workspace the caller manages.
func Direct(ws provider.Workspace) Target { return direct{ws} }

type direct struct{ ws provider.Workspace }

func (d direct) Use(_ context.Context, fn func(provider.Workspace) error) error { return fn(d.ws) }

// Session is a Target over workspace d of session s in m: opened on first
// use, re-resolved and retried once when evicted.
func Session(m *provider.Manager, s provider.Session, d provider.Declaration) Target {
	return session{m, s, d}
}

type session struct {
	m *provider.Manager
	s provider.Session
	d provider.Declaration
}

func (t session) Use(ctx context.Context, fn func(provider.Workspace) error) error {
	return t.m.Use(ctx, t.s, t.d, fn)
}
