package provider

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"sync"
	"time"

	"github.com/forkspace/forkspace/meta/memmeta"
)

// Declaration is one workspace an agent declares: a name unique within the
// session, the provider configuration, and the capabilities the agent's
// tools need (nil: whatever the provider builds).
type Declaration struct {
	Name         string
	Config       Config
	Capabilities *Capabilities
}

// ManagerOptions configure a Manager. Only Registry is required.
type ManagerOptions struct {
	Registry *Registry
	// Refs persists refs (nil: an in-memory store, so refs do not survive
	// the process).
	Refs   RefStore
	Logger *slog.Logger
	// Attempts bounds the tries of an Open or Resolve that fails
	// transiently (default DefaultAttempts).
	Attempts int
	// Backoff is the first wait between tries, doubled each time (default
	// DefaultBackoff); MaxWait caps the sum of the waits (default
	// DefaultMaxWait).
	Backoff time.Duration
	MaxWait time.Duration
	// Sleep waits between tries (default: a timer that honours ctx). Tests
	// replace it to observe the backoff.
	Sleep func(ctx context.Context, d time.Duration) error
}

// Manager is the session side of the provider contract. It opens each
// declared workspace of a session lazily on first use, caches the live
// workspace, persists its ref, resolves the ref instead of opening again
// (after a restart: a new Manager over the same RefStore), retries
// transient failures with exponential backoff, re-resolves a workspace
// whose module call failed with *EvictedError and retries that call once,
// and closes the session's workspaces at session end.
//
// A workspace whose open or resolve failed (permanently, or transiently
// past the retries) stays failed: later calls return the same error until
// the session is closed. All methods are safe for concurrent use; calls
// for one (session, name) are serialized while the workspace is opened.
type Manager struct {
	opts ManagerOptions
	log  *slog.Logger

	mu      sync.Mutex
	entries map[entryKey]*entry
	closed  bool
}

type entryKey struct{ session, name string }

// entry is the state of one declared workspace of one session.
type entry struct {
	mu     sync.Mutex
	ws     Workspace
	ref    Ref
	hasRef bool
	failed error
}

// NewManager returns a Manager. It panics if opts.Registry is nil.
func NewManager(opts ManagerOptions) *Manager {
	if opts.Registry == nil {
		panic("provider.NewManager: nil Registry")
	}
	if opts.Refs == nil {
		opts.Refs = MetaRefs(memmeta.New())
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.Attempts <= 0 {
		opts.Attempts = DefaultAttempts
	}
	if opts.Backoff <= 0 {
		opts.Backoff = DefaultBackoff
	}
	if opts.MaxWait <= 0 {
		opts.MaxWait = DefaultMaxWait
	}
	if opts.Sleep == nil {
		opts.Sleep = sleepCtx
	}
	return &Manager{opts: opts, log: opts.Logger.With("component", "provider"), entries: map[entryKey]*entry{}}
}

func (m *Manager) entry(session, name string) (*entry, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.closed {
		return nil, fmt.Errorf("workspace %s of session %s: %w", name, session, fs.ErrClosed)
	}
	k := entryKey{session, name}
	e := m.entries[k]
	if e == nil {
		e = &entry{}
		m.entries[k] = e
	}
	return e, nil
}

// Workspace returns the live workspace d of session s: the cached one, or
// one resolved from the persisted ref, or a newly opened one (whose ref is
// then persisted). Open and resolve failures are *FailedError.
func (m *Manager) Workspace(ctx context.Context, s Session, d Declaration) (Workspace, error) {
	if s.ID == "" || d.Name == "" {
		return nil, fmt.Errorf("open workspace: %w: empty session ID or workspace name", fs.ErrInvalid)
	}
	e, err := m.entry(s.ID, d.Name)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case e.failed != nil:
		return nil, e.failed
	case e.ws != nil:
		return e.ws, nil
	}
	if !e.hasRef {
		ref, err := m.opts.Refs.Ref(ctx, s.ID, d.Name)
		switch {
		case err == nil:
			e.ref, e.hasRef = ref, true
		case !errors.Is(err, fs.ErrNotExist):
			return nil, fmt.Errorf("open workspace %s: %w", d.Name, err)
		}
	}
	if e.hasRef {
		err = m.resolveLocked(ctx, e, d)
	} else {
		err = m.openLocked(ctx, e, s, d)
	}
	if err != nil {
		var fe *FailedError
		if errors.As(err, &fe) {
			e.failed = err
		}
		return nil, err
	}
	return e.ws, nil
}

// openLocked opens d with its provider and persists the ref.
func (m *Manager) openLocked(ctx context.Context, e *entry, s Session, d Declaration) error {
	if d.Config == nil {
		return fmt.Errorf("open workspace %s: %w: no provider config", d.Name, fs.ErrInvalid)
	}
	p, err := m.opts.Registry.Provider(d.Config.Kind())
	if err != nil {
		return &FailedError{Workspace: d.Name, Err: err}
	}
	var (
		ws  Workspace
		ref Ref
	)
	err = m.retry(ctx, func() error {
		var err error
		ws, ref, err = p.Open(ctx, d.Config, s, d.Capabilities)
		return asFailed(d.Name, err)
	})
	if err != nil {
		return err
	}
	if err := CheckCapabilities(d.Name, d.Capabilities, ref, ws); err != nil {
		return errors.Join(err, ws.Close(ctx))
	}
	if err := m.opts.Refs.PutRef(ctx, s.ID, d.Name, ref); err != nil {
		return errors.Join(fmt.Errorf("open workspace %s: %w", d.Name, err), ws.Close(ctx))
	}
	m.log.Debug("opened workspace", "session", s.ID, "workspace", d.Name, "provider", ref.ProviderID)
	e.ws, e.ref, e.hasRef = ws, ref, true
	return nil
}

// resolveLocked rebuilds the workspace from e.ref.
func (m *Manager) resolveLocked(ctx context.Context, e *entry, d Declaration) error {
	p, err := m.opts.Registry.Provider(e.ref.ProviderID)
	if err != nil {
		return &FailedError{Workspace: d.Name, Err: err}
	}
	var ws Workspace
	err = m.retry(ctx, func() error {
		var err error
		ws, err = p.Resolve(ctx, e.ref)
		return asFailed(d.Name, err)
	})
	if err != nil {
		return err
	}
	if err := CheckCapabilities(d.Name, d.Capabilities, e.ref, ws); err != nil {
		return errors.Join(err, ws.Close(ctx))
	}
	m.log.Debug("resolved workspace", "workspace", d.Name, "provider", e.ref.ProviderID)
	e.ws = ws
	return nil
}

// asFailed makes any open or resolve error a *FailedError (permanent
// unless the provider said otherwise).
func asFailed(name string, err error) error {
	var fe *FailedError
	if err == nil || errors.As(err, &fe) {
		return err
	}
	return &FailedError{Workspace: name, Err: err}
}

// Use runs fn with the live workspace d of session s. If fn fails with
// *EvictedError, the workspace is re-resolved from its ref and fn runs once
// more; its second result is returned as is. fn may run concurrently with
// other calls on the same workspace.
func (m *Manager) Use(ctx context.Context, s Session, d Declaration, fn func(Workspace) error) error {
	ws, err := m.Workspace(ctx, s, d)
	if err != nil {
		return err
	}
	err = fn(ws)
	var ev *EvictedError
	if !errors.As(err, &ev) {
		return err
	}
	m.log.Info("workspace evicted, re-resolving", "session", s.ID, "workspace", d.Name, "err", err)
	if ws, err = m.reresolve(ctx, s, d, ws); err != nil {
		return err
	}
	return fn(ws)
}

// reresolve replaces the evicted workspace stale by one resolved from the
// ref, unless another caller already did.
func (m *Manager) reresolve(ctx context.Context, s Session, d Declaration, stale Workspace) (Workspace, error) {
	e, err := m.entry(s.ID, d.Name)
	if err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.failed != nil {
		return nil, e.failed
	}
	if e.ws != nil && e.ws != stale {
		return e.ws, nil
	}
	if e.ws != nil {
		if err := e.ws.Close(ctx); err != nil {
			m.log.Debug("close evicted workspace", "workspace", d.Name, "err", err)
		}
		e.ws = nil
	}
	if err := m.resolveLocked(ctx, e, d); err != nil {
		var fe *FailedError
		if errors.As(err, &fe) {
			e.failed = err
		}
		return nil, err
	}
	return e.ws, nil
}

// Ref returns the ref of workspace name of session s: the live one, or the
// persisted one (fs.ErrNotExist if it was never opened).
func (m *Manager) Ref(ctx context.Context, s Session, name string) (Ref, error) {
	e, err := m.entry(s.ID, name)
	if err != nil {
		return Ref{}, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.hasRef {
		return e.ref, nil
	}
	return m.opts.Refs.Ref(ctx, s.ID, name)
}

// CloseSession ends session: it closes the session's live workspaces and
// deletes its persisted refs. Closing a session that has none is not an
// error.
func (m *Manager) CloseSession(ctx context.Context, session string) error {
	var errs []error
	for _, ws := range m.take(func(k entryKey) bool { return k.session == session }) {
		errs = append(errs, ws.Close(ctx))
	}
	refs, err := m.opts.Refs.Refs(ctx, session)
	errs = append(errs, err)
	for name := range refs {
		errs = append(errs, m.opts.Refs.DeleteRef(ctx, session, name))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("close session %s: %w", session, err)
	}
	return nil
}

// Close closes every live workspace and refuses further calls with
// fs.ErrClosed. Refs stay persisted, so another Manager resolves them.
// Close is idempotent.
func (m *Manager) Close(ctx context.Context) error {
	m.mu.Lock()
	m.closed = true
	m.mu.Unlock()
	var errs []error
	for _, ws := range m.take(func(entryKey) bool { return true }) {
		errs = append(errs, ws.Close(ctx))
	}
	return errors.Join(errs...)
}

// take removes the entries that match from the cache and returns their
// live workspaces.
func (m *Manager) take(match func(entryKey) bool) []Workspace {
	m.mu.Lock()
	var taken []*entry
	for k, e := range m.entries {
		if match(k) {
			taken = append(taken, e)
			delete(m.entries, k)
		}
	}
	m.mu.Unlock()
	var out []Workspace
	for _, e := range taken {
		e.mu.Lock()
		if e.ws != nil {
			out = append(out, e.ws)
			e.ws = nil
		}
		e.failed = fmt.Errorf("workspace closed: %w", fs.ErrClosed)
		e.mu.Unlock()
	}
	return out
}
