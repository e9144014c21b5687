package localprovider

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io/fs"
)

// Kind is the config kind and provider ID of this package.
const Kind = "local"

// Config selects the workspace of a session.
type Config struct {
	// Workspace is the name (or ID) of the workspace. Empty means one
	// workspace per session.
	Workspace string `json:"workspace,omitempty"`
	// ForkFrom, when the workspace does not exist yet, creates it as a
	// fork of this state (NAME or NAME@CHECKPOINT) instead of empty.
	ForkFrom string `json:"fork_from,omitempty"`
}

// Kind implements provider.Config.
func (Config) Kind() string { return Kind }

// Settings returns c; providers built on this package (memprovider) accept
// any config with this method.
func (c Config) Settings() Config { return c }

// DecodeAs reads a JSON config object whose "kind" must be kind,
// rejecting unknown fields (fs.ErrInvalid). Providers built on this package
// use it to decode their own kinds.
func DecodeAs(data []byte, kind string) (Config, error) {
	var raw struct {
		Kind string `json:"kind"`
		Config
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&raw); err != nil {
		return Config{}, fmt.Errorf("%w: %w", fs.ErrInvalid, err)
	}
	if raw.Kind != kind {
		return Config{}, fmt.Errorf("%w: kind %q, want %q", fs.ErrInvalid, raw.Kind, kind)
	}
	return raw.Config, nil
}
