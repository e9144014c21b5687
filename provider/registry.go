package provider

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"
)

// ConfigDecoder is implemented by providers whose configurations can be
// decoded from JSON; Registry.DecodeConfig uses it.
type ConfigDecoder interface {
	// DecodeConfig decodes a JSON configuration object whose "kind" is the
	// provider's ID. Invalid configurations wrap fs.ErrInvalid.
	DecodeConfig(data []byte) (Config, error)
}

// Registry maps provider IDs (config kinds) to providers. Registration is
// explicit; the zero value is an empty registry ready to use. A Registry is
// safe for concurrent use.
type Registry struct {
	mu        sync.RWMutex
	providers map[string]Provider
}

// Register adds p under p.ID(). Registering an ID twice is fs.ErrExist.
func (r *Registry) Register(p Provider) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.providers == nil {
		r.providers = map[string]Provider{}
	}
	if _, ok := r.providers[p.ID()]; ok {
		return fmt.Errorf("register provider %q: %w", p.ID(), fs.ErrExist)
	}
	r.providers[p.ID()] = p
	return nil
}

// Kinds returns the registered provider IDs, sorted.
func (r *Registry) Kinds() []string {
	r.mu.RLock()
	defer r.mu.RUnlock()
	kinds := make([]string, 0, len(r.providers))
	for k := range r.providers {
		kinds = append(kinds, k)
	}
	slices.Sort(kinds)
	return kinds
}

// Provider returns the provider registered under id. An unknown id is
// fs.ErrNotExist, with the known kinds in the message.
func (r *Registry) Provider(id string) (Provider, error) {
	r.mu.RLock()
	p, ok := r.providers[id]
	r.mu.RUnlock()
	if !ok {
		return nil, fmt.Errorf("unknown provider kind %q (known kinds: %s): %w", id, r.known(), fs.ErrNotExist)
	}
	return p, nil
}

func (r *Registry) known() string {
	kinds := r.Kinds()
	if len(kinds) == 0 {
		return "none registered"
	}
	return strings.Join(kinds, ", ")
}

// DecodeConfig decodes a JSON configuration object, dispatching on its
// "kind" field to the registered provider's ConfigDecoder. A missing kind or
// malformed JSON wraps fs.ErrInvalid; an unknown kind wraps fs.ErrNotExist
// and lists the known kinds; a provider that cannot decode configurations
// wraps errors.ErrUnsupported.
func (r *Registry) DecodeConfig(data []byte) (Config, error) {
	var head struct {
		Kind string `json:"kind"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, fmt.Errorf("decode provider config: %w: %w", fs.ErrInvalid, err)
	}
	if head.Kind == "" {
		return nil, fmt.Errorf("decode provider config: %w: missing \"kind\" (known kinds: %s)", fs.ErrInvalid, r.known())
	}
	p, err := r.Provider(head.Kind)
	if err != nil {
		return nil, fmt.Errorf("decode provider config: %w", err)
	}
	d, ok := p.(ConfigDecoder)
	if !ok {
		return nil, fmt.Errorf("decode provider config: provider %q: %w", head.Kind, errors.ErrUnsupported)
	}
	cfg, err := d.DecodeConfig(data)
	if err != nil {
		return nil, fmt.Errorf("decode provider config %q: %w", head.Kind, err)
	}
	return cfg, nil
}
