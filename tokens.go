package forkspace

import (
	"context"

	"github.com/forkspace/forkspace/auth"
)

// Tokens returns the store's access tokens (package auth), read on first
// use: one instance per store, so that authentication turns on for every
// door of a process as soon as one creates a token.
func (s *Store) Tokens(ctx context.Context) (*auth.Tokens, error) {
	s.tokensMu.Lock()
	defer s.tokensMu.Unlock()
	if s.tokens == nil {
		t, err := auth.New(ctx, s.meta)
		if err != nil {
			return nil, err
		}
		s.tokens = t
	}
	return s.tokens, nil
}
