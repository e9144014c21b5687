package localprovider

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/provider"
)

// SchemaVersion is the version of the refs this package writes.
const SchemaVersion = 2

// ShellFunc builds the shell module of a workspace.
type ShellFunc func(ctx context.Context, ws *forkspace.Workspace) (provider.Shell, error)

// Options configure a Provider.
type Options struct {
	// ID is the provider ID and config kind (default Kind).
	ID     string
	Logger *slog.Logger
	// Shell builds the shell module (nil: workspaces have none).
	Shell ShellFunc
}

// Provider opens workspaces of one forkspace store. It is safe for
// concurrent use by many sessions and keeps no per-session state.
type Provider struct {
	st   *forkspace.Store
	opts Options
	log  *slog.Logger
}

var (
	_ provider.Provider      = (*Provider)(nil)
	_ provider.ConfigDecoder = (*Provider)(nil)
)

// New returns a provider over st. The caller keeps ownership of st.
func New(st *forkspace.Store, opts Options) *Provider {
	if opts.ID == "" {
		opts.ID = Kind
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Provider{st: st, opts: opts, log: opts.Logger.With("component", "provider", "provider", opts.ID)}
}

// Store returns the store the provider serves.
func (p *Provider) Store() *forkspace.Store { return p.st }

// ID implements provider.Provider.
func (p *Provider) ID() string { return p.opts.ID }

// DecodeConfig implements provider.ConfigDecoder.
func (p *Provider) DecodeConfig(data []byte) (provider.Config, error) {
	return DecodeAs(data, Kind)
}

// payload is the provider-specific part of a Ref.
type payload struct {
	WorkspaceID string `json:"workspace_id"`
}

// Open implements provider.Provider: it opens the configured workspace,
// creating it (empty or as a fork of Config.ForkFrom) if it does not exist.
func (p *Provider) Open(ctx context.Context, cfg provider.Config, s provider.Session, declared *provider.Capabilities) (provider.Workspace, provider.Ref, error) {
	c, ok := cfg.(interface{ Settings() Config })
	if !ok {
		return nil, provider.Ref{}, &provider.FailedError{Workspace: s.ID, Err: fmt.Errorf("%w: config of kind %q is not a %s config", fs.ErrInvalid, cfg.Kind(), p.ID())}
	}
	conf := c.Settings()
	name := conf.Workspace
	if name == "" {
		var err error
		if name, err = SessionWorkspace(s.ID); err != nil {
			return nil, provider.Ref{}, &provider.FailedError{Workspace: p.ID(), Err: err}
		}
	}
	w, err := p.openOrCreate(ctx, name, conf.ForkFrom)
	if err != nil {
		return nil, provider.Ref{}, failed(name, err)
	}
	want := provider.Capabilities{FS: true, Snapshot: true, Shell: p.opts.Shell != nil}
	if declared != nil && !declared.Shell {
		want.Shell = false
	}
	ws, err := p.build(ctx, w, want)
	if err != nil {
		return nil, provider.Ref{}, failed(name, err)
	}
	ref, err := p.ref(w, want)
	if err != nil {
		return nil, provider.Ref{}, failed(name, err)
	}
	return ws, ref, nil
}

// SessionWorkspace is the name of the per-session workspace of session ID:
// "session-ID" when that is a valid name, else "session_" and a digest of
// the ID. The mapping is injective: no ID's direct name starts with
// "session_", so a digest name never collides with a direct one. An empty
// ID is fs.ErrInvalid.
func SessionWorkspace(id string) (string, error) {
	if id == "" {
		return "", fmt.Errorf("session workspace: %w: empty session ID", fs.ErrInvalid)
	}
	if name := "session-" + id; forkspace.ValidName(name) == nil {
		return name, nil
	}
	sum := sha256.Sum256([]byte(id))
	return "session_" + hex.EncodeToString(sum[:16]), nil
}

func (p *Provider) openOrCreate(ctx context.Context, name, forkFrom string) (*forkspace.Workspace, error) {
	for {
		w, err := p.st.Workspace(ctx, name)
		if !errors.Is(err, fs.ErrNotExist) {
			return w, err
		}
		if forkFrom == "" {
			w, err = p.st.Create(ctx, name, forkspace.CreateOptions{})
		} else {
			w, err = p.fork(ctx, forkFrom, name)
		}
		if !errors.Is(err, fs.ErrExist) { // else created concurrently: open it
			return w, err
		}
	}
}

func (p *Provider) fork(ctx context.Context, from, name string) (*forkspace.Workspace, error) {
	src, cp, err := forkspace.ParseState(from)
	if err != nil {
		return nil, err
	}
	w, err := p.st.Workspace(ctx, src)
	if err != nil {
		return nil, fmt.Errorf("fork from %s: %w", from, err)
	}
	return w.Fork(ctx, name, forkspace.ForkOptions{Checkpoint: cp})
}

func (p *Provider) ref(w *forkspace.Workspace, caps provider.Capabilities) (provider.Ref, error) {
	data, err := json.Marshal(payload{WorkspaceID: w.ID()})
	if err != nil {
		return provider.Ref{}, err
	}
	return provider.Ref{ProviderID: p.ID(), Payload: data, Capabilities: caps, SchemaVersion: provider.Version(SchemaVersion)}, nil
}

// Resolve implements provider.Provider: it reopens the workspace the ref
// names, with the modules the ref records.
func (p *Provider) Resolve(ctx context.Context, ref provider.Ref) (provider.Workspace, error) {
	if ref.ProviderID != p.ID() {
		return nil, &provider.FailedError{Workspace: ref.ProviderID, Err: fmt.Errorf("%w: ref of provider %q given to %q", fs.ErrInvalid, ref.ProviderID, p.ID())}
	}
	if err := provider.CheckSchemaVersion(ref.SchemaVersion, p.ID(), SchemaVersion, p.log); err != nil {
		return nil, err
	}
	var pl payload
	if err := json.Unmarshal(ref.Payload, &pl); err != nil || pl.WorkspaceID == "" {
		return nil, &provider.FailedError{Workspace: p.ID(), Err: fmt.Errorf("%w: ref payload has no workspace_id", fs.ErrInvalid)}
	}
	w, err := p.st.Workspace(ctx, pl.WorkspaceID)
	if err != nil {
		return nil, failed(pl.WorkspaceID, err)
	}
	ws, err := p.build(ctx, w, ref.Capabilities)
	if err != nil {
		return nil, failed(pl.WorkspaceID, err)
	}
	return ws, nil
}

// failed wraps an open or resolve error; a busy store is transient.
func failed(name string, err error) error {
	var fe *provider.FailedError
	if errors.As(err, &fe) {
		return err
	}
	return &provider.FailedError{Workspace: name, Transient: errors.Is(err, errdefs.ErrBusy), Err: err}
}

func (p *Provider) build(ctx context.Context, w *forkspace.Workspace, caps provider.Capabilities) (*Workspace, error) {
	ws := &Workspace{p: p, w: w, caps: caps}
	if caps.Shell {
		if p.opts.Shell == nil {
			return nil, fmt.Errorf("build shell: %w: provider %q has no shell", errors.ErrUnsupported, p.ID())
		}
		sh, err := p.opts.Shell(ctx, w)
		if err != nil {
			return nil, fmt.Errorf("build shell: %w", err)
		}
		ws.shell = sh
	}
	return ws, nil
}
