package main

import (
	"context"
	"fmt"
	"net"
	"net/http"

	"github.com/spf13/cobra"

	"github.com/forkspace/forkspace/auth"
	"github.com/forkspace/forkspace/httpapi"
)

// tlsFlags are serve's authentication and TLS flags.
type tlsFlags struct {
	auth      bool
	cert, key string
}

func (t *tlsFlags) add(c *cobra.Command) {
	c.Flags().BoolVar(&t.auth, "auth", false, "require a token on every request even before the store holds one (it does once any token exists)")
	c.Flags().StringVar(&t.cert, "tls-cert", "", "serve HTTPS with this certificate (PEM; with --tls-key)")
	c.Flags().StringVar(&t.key, "tls-key", "", "the private key of --tls-cert (PEM)")
}

func (t *tlsFlags) check() error {
	if (t.cert == "") != (t.key == "") {
		return usage("--tls-cert and --tls-key go together")
	}
	return nil
}

func (t *tlsFlags) scheme() string {
	if t.cert != "" {
		return "https"
	}
	return "http"
}

// serve serves hs on ln, over TLS when configured.
func (t *tlsFlags) serve(hs *http.Server, ln net.Listener) error {
	if t.cert != "" {
		return hs.ServeTLS(ln, t.cert, t.key)
	}
	return hs.Serve(ln)
}

// exposed refuses an address other hosts can reach unless tokens are on
// and TLS is configured, or insecure.
func (t *tlsFlags) exposed(ctx context.Context, flag, addr string, tokens *auth.Tokens, insecure bool) error {
	local, err := httpapi.LoopbackAddr(ctx, addr)
	if err != nil {
		return usage("%s: %v", flag, err)
	}
	if local || insecure || (tokens.Enabled() && t.cert != "") {
		return nil
	}
	return usage("%s %s is reachable from other hosts: create a token ('forkspace token create') or pass --auth, and serve TLS (--tls-cert, --tls-key); or listen on a loopback address (127.0.0.1:PORT); or pass --insecure to accept requests from anyone who can reach it", flag, addr)
}

// tokens returns the store's tokens, required when t.auth is set.
func (a *app) tokens(ctx context.Context, t tlsFlags) (*auth.Tokens, error) {
	tokens, err := a.st.Tokens(ctx)
	if err != nil {
		return nil, err
	}
	if t.auth {
		tokens.Require()
	}
	return tokens, nil
}

// noteAuth says whether requests need a token.
func (a *app) noteAuth(tokens *auth.Tokens) {
	if tokens.Enabled() {
		fmt.Fprintln(a.stderr, "forkspace: every request needs a token (Authorization: Bearer TOKEN; 'forkspace token create')")
		return
	}
	fmt.Fprintln(a.stderr, "forkspace: the store has no token: anyone on this host may use the server ('forkspace token create' turns tokens on)")
}
