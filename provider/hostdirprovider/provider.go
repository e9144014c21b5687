package hostdirprovider

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/forkspace/forkspace/provider"
	"github.com/forkspace/forkspace/provider/localprovider"
)

// Kind is the config kind and provider ID of this package.
const Kind = "hostdir"

// SchemaVersion is the version of the refs this package writes.
const SchemaVersion = 2

// Config selects the host directory.
type Config struct {
	// Dir is the directory (created if missing).
	Dir string `json:"dir"`
	// PerSession gives each session its own subdirectory of Dir.
	PerSession bool `json:"per_session,omitempty"`
}

// Kind implements provider.Config.
func (Config) Kind() string { return Kind }

// Provider serves host directories. It holds only a logger.
type Provider struct{ log *slog.Logger }

var (
	_ provider.Provider      = (*Provider)(nil)
	_ provider.ConfigDecoder = (*Provider)(nil)
)

// New returns the provider (log may be nil).
func New(log *slog.Logger) *Provider {
	if log == nil {
		log = slog.Default()
	}
	return &Provider{log: log.With("component", "provider", "provider", Kind)}
}

// ID implements provider.Provider.
func (*Provider) ID() string { return Kind }

// DecodeConfig implements provider.ConfigDecoder.
func (*Provider) DecodeConfig(data []byte) (provider.Config, error) {
	var raw struct {
		Kind string `json:"kind"`
		Config
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("%w: %w", fs.ErrInvalid, err)
	}
	if raw.Kind != Kind || raw.Dir == "" {
		return nil, fmt.Errorf("%w: want kind %q and a dir", fs.ErrInvalid, Kind)
	}
	return raw.Config, nil
}

type payload struct {
	Dir string `json:"dir"`
}

// Open implements provider.Provider.
func (p *Provider) Open(ctx context.Context, cfg provider.Config, s provider.Session, declared *provider.Capabilities) (provider.Workspace, provider.Ref, error) {
	c, ok := cfg.(Config)
	if !ok || c.Dir == "" {
		return nil, provider.Ref{}, &provider.FailedError{Workspace: s.ID, Err: fmt.Errorf("%w: want a %s config with a dir", fs.ErrInvalid, Kind)}
	}
	dir, err := filepath.Abs(c.Dir)
	if err != nil {
		return nil, provider.Ref{}, &provider.FailedError{Workspace: s.ID, Err: err}
	}
	if c.PerSession {
		name, err := localprovider.SessionWorkspace(s.ID)
		if err != nil {
			return nil, provider.Ref{}, &provider.FailedError{Workspace: Kind, Err: err}
		}
		dir = filepath.Join(dir, name)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, provider.Ref{}, &provider.FailedError{Workspace: s.ID, Err: err}
	}
	ws, err := open(dir)
	if err != nil {
		return nil, provider.Ref{}, err
	}
	data, err := json.Marshal(payload{Dir: dir})
	if err != nil {
		return nil, provider.Ref{}, errors.Join(&provider.FailedError{Workspace: s.ID, Err: err}, ws.Close(ctx))
	}
	ref := provider.Ref{ProviderID: Kind, Payload: data, Capabilities: provider.Capabilities{FS: true}, SchemaVersion: provider.Version(SchemaVersion)}
	return ws, ref, nil
}

// Resolve implements provider.Provider. A directory that is gone is a
// permanent failure.
func (p *Provider) Resolve(ctx context.Context, ref provider.Ref) (provider.Workspace, error) {
	if ref.ProviderID != Kind {
		return nil, &provider.FailedError{Workspace: ref.ProviderID, Err: fmt.Errorf("%w: ref of provider %q given to %q", fs.ErrInvalid, ref.ProviderID, Kind)}
	}
	if err := provider.CheckSchemaVersion(ref.SchemaVersion, Kind, SchemaVersion, p.log); err != nil {
		return nil, err
	}
	var pl payload
	if err := json.Unmarshal(ref.Payload, &pl); err != nil || !filepath.IsAbs(pl.Dir) {
		return nil, &provider.FailedError{Workspace: Kind, Err: fmt.Errorf("%w: ref payload has no absolute dir", fs.ErrInvalid)}
	}
	return open(pl.Dir)
}

func open(dir string) (*Workspace, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, &provider.FailedError{Workspace: dir, Err: err}
	}
	return &Workspace{dir: dir, fs: &FS{root: root}}, nil
}

// Workspace is a live host-directory workspace.
type Workspace struct {
	dir string
	fs  *FS
}

var _ provider.Workspace = (*Workspace)(nil)

// ID implements provider.Workspace: the directory's absolute path.
func (w *Workspace) ID() string { return w.dir }

// FS implements provider.Workspace.
func (w *Workspace) FS() provider.FS { return w.fs }

// Shell implements provider.Workspace: none.
func (w *Workspace) Shell() provider.Shell { return nil }

// Snapshots implements provider.Workspace: none.
func (w *Workspace) Snapshots() provider.Snapshots { return nil }

// Close implements provider.Workspace: it closes the os.Root; later file
// operations fail with fs.ErrClosed.
func (w *Workspace) Close(context.Context) error { return w.fs.root.Close() }
