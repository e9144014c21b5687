package provider_test

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"time"

	"github.com/forkspace/forkspace/provider"
)

// fakeConfig is the config of fakeProvider.
type fakeConfig struct{ Kind_ string }

func (c fakeConfig) Kind() string { return c.Kind_ }

// fakeProvider fails Open/Resolve on demand and counts calls. Its
// workspaces carry what open/resolve built; module calls can be made to
// fail with *EvictedError through the workspace's evicted flag.
type fakeProvider struct {
	id   string
	caps provider.Capabilities // what Open builds and records
	// refCaps, if set, is recorded in the ref instead of caps (a lying
	// provider).
	refCaps *provider.Capabilities

	mu            sync.Mutex
	opens         int
	resolves      int
	failOpens     int  // first N opens fail
	failResolves  int  // first N resolves fail
	transient     bool // failures are transient
	version       int
	lastWorkspace *fakeWorkspace
}

func (p *fakeProvider) ID() string { return p.id }

func (p *fakeProvider) DecodeConfig(data []byte) (provider.Config, error) {
	return fakeConfig{Kind_: p.id}, nil
}

func (p *fakeProvider) Open(ctx context.Context, cfg provider.Config, s provider.Session, declared *provider.Capabilities) (provider.Workspace, provider.Ref, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.opens++
	if p.opens <= p.failOpens {
		return nil, provider.Ref{}, &provider.FailedError{Workspace: s.ID, Transient: p.transient, Err: errors.New("backend unavailable")}
	}
	caps := p.caps
	if p.refCaps != nil {
		caps = *p.refCaps
	}
	payload, _ := json.Marshal(map[string]string{"session": s.ID})
	ws := &fakeWorkspace{caps: p.caps}
	p.lastWorkspace = ws
	return ws, provider.Ref{ProviderID: p.id, Payload: payload, Capabilities: caps, SchemaVersion: provider.Version(2)}, nil
}

func (p *fakeProvider) Resolve(ctx context.Context, ref provider.Ref) (provider.Workspace, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.resolves++
	if err := provider.CheckSchemaVersion(ref.SchemaVersion, p.id, 2, nil); err != nil {
		return nil, err
	}
	if p.resolves <= p.failResolves {
		return nil, &provider.FailedError{Workspace: "x", Transient: p.transient, Err: errors.New("backend unavailable")}
	}
	ws := &fakeWorkspace{caps: p.caps}
	p.lastWorkspace = ws
	return ws, nil
}

func (p *fakeProvider) counts() (opens, resolves int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.opens, p.resolves
}

type fakeWorkspace struct {
	caps    provider.Capabilities
	mu      sync.Mutex
	evicted bool
	closed  bool
}

func (w *fakeWorkspace) ID() string { return "fake" }
func (w *fakeWorkspace) FS() provider.FS {
	if !w.caps.FS {
		return nil
	}
	return fakeFS{}
}
func (w *fakeWorkspace) Shell() provider.Shell {
	if !w.caps.Shell {
		return nil
	}
	return fakeShell{}
}
func (w *fakeWorkspace) Snapshots() provider.Snapshots { return nil }
func (w *fakeWorkspace) Close(context.Context) error {
	w.mu.Lock()
	w.closed = true
	w.mu.Unlock()
	return nil
}

// call is a module call: it fails with *EvictedError once evicted.
func (w *fakeWorkspace) call() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.evicted {
		return &provider.EvictedError{Workspace: "fake", Err: errors.New("sandbox reclaimed")}
	}
	return nil
}

// fakeFS and fakeShell are non-nil modules; the manager tests never call
// them.
type (
	fakeFS    struct{ provider.FS }
	fakeShell struct{ provider.Shell }
)

// sleeps records the waits of the manager's backoff.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(_ context.Context, d time.Duration) error {
	s.mu.Lock()
	s.d = append(s.d, d)
	s.mu.Unlock()
	return nil
}
