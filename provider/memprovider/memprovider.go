package memprovider

import (
	"context"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/blob/memblob"
	"github.com/forkspace/forkspace/meta/memmeta"
	"github.com/forkspace/forkspace/provider"
	"github.com/forkspace/forkspace/provider/localprovider"
)

// Kind is the config kind and provider ID of this package.
const Kind = "memory"

// Config selects the workspace of a session; see localprovider.Config.
type Config struct {
	localprovider.Config
}

// Kind implements provider.Config.
func (Config) Kind() string { return Kind }

// Options configure a Provider.
type Options = localprovider.Options

// Provider serves workspaces of its own in-memory store.
type Provider struct {
	*localprovider.Provider
}

var (
	_ provider.Provider      = (*Provider)(nil)
	_ provider.ConfigDecoder = (*Provider)(nil)
)

// New opens an empty in-memory store and returns its provider; Close
// releases the store. opts.ID is forced to Kind.
func New(ctx context.Context, opts Options) (*Provider, error) {
	st, err := forkspace.Open(ctx, forkspace.Options{Meta: memmeta.New(), Blobs: memblob.New(), Logger: opts.Logger})
	if err != nil {
		return nil, err
	}
	opts.ID = Kind
	return &Provider{localprovider.New(st, opts)}, nil
}

// DecodeConfig implements provider.ConfigDecoder.
func (p *Provider) DecodeConfig(data []byte) (provider.Config, error) {
	c, err := localprovider.DecodeAs(data, Kind)
	if err != nil {
		return nil, err
	}
	return Config{c}, nil
}

// Close discards the store and every workspace in it.
func (p *Provider) Close() error { return p.Store().Close() }
