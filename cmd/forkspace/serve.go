package main

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"time"

	"github.com/spf13/cobra"

	"github.com/forkspace/forkspace/dashboard"
	"github.com/forkspace/forkspace/httpapi"
)

func serveCmd(a *app) *cobra.Command {
	var (
		f        agentFlags
		addr     string
		insecure bool
		webdav   string
		fuseDir  string
		ff       fuseFlags
		s3addr   string
		t        tlsFlags
		// auditKeep bounds the age of the audit log and so how far back
		// the change feed reaches.
		auditKeep time.Duration
	)
	c := &cobra.Command{
		Use:   "serve",
		Short: "Serve the workspace tools over MCP streamable HTTP, and the REST API",
		Long: "Serve the Model Context Protocol over streamable HTTP at /mcp, the REST API at /v1/ (its\n" +
			"OpenAPI document at /v1/openapi.json) and a health check at /healthz.\n" +
			"Each MCP session works in one workspace: the one named by ?workspace=NAME on the endpoint URL\n" +
			"(created if missing), or one created for the session. The store is created if needed.\n" +
			"Once the store holds a token ('forkspace token create'), or with --auth, every request needs\n" +
			"one (Authorization: Bearer TOKEN) and is limited to its scope; a store without tokens is\n" +
			"served to this host alone. A non-loopback --addr needs tokens and TLS (--tls-cert, --tls-key),\n" +
			"or --insecure. Requests whose Host is not a loopback name (on a loopback address) or whose\n" +
			"Origin is not the server's own are refused, and so is a token in a query string.",
		Example: "  forkspace serve\n" +
			"  forkspace serve --addr 127.0.0.1:7777   # then connect to http://127.0.0.1:7777/mcp?workspace=agent-1",
		Args: args(cobra.NoArgs),
		RunE: func(c *cobra.Command, _ []string) error {
			ctx := c.Context()
			if err := t.check(); err != nil {
				return err
			}
			srv, m, err := a.agent(ctx, f)
			if err != nil {
				return err
			}
			defer m.Close(context.WithoutCancel(ctx))
			tokens, err := a.tokens(ctx, t)
			if err != nil {
				return err
			}
			if err := t.exposed(ctx, "--addr", addr, tokens, insecure); err != nil {
				return err
			}
			if auditKeep > 0 {
				go keepAudit(ctx, a.st.AuditLog(), auditKeep, func(err error) { fmt.Fprintf(a.stderr, "forkspace: warning: %v\n", err) })
			}
			for _, d := range []struct {
				door
				addr string
			}{{webdavDoor, webdav}, {s3Door, s3addr}} {
				if d.addr == "" {
					continue
				}
				stop, err := d.open(ctx, a, d.addr, insecure)
				if err != nil {
					return err
				}
				defer stop()
			}
			if fuseDir != "" {
				unmount, err := a.mountAll(ctx, fuseDir, &ff)
				if err != nil {
					return err
				}
				defer unmount()
			}
			mux := http.NewServeMux()
			mux.Handle("/mcp", httpapi.Authenticate(tokens, srv.Handler()))
			mux.Handle("/v1/", a.restAPI(tokens).Handler())
			mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { fmt.Fprintln(w, "ok") })
			mux.Handle(dashboard.Prefix, dashboard.Handler())
			mux.Handle("GET /{$}", http.RedirectHandler(dashboard.Prefix, http.StatusFound))
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return fmt.Errorf("serve: %w", err)
			}
			base := t.scheme() + "://" + ln.Addr().String()
			fmt.Fprintf(a.stderr, "forkspace: serving MCP at %s/mcp\n", base)
			fmt.Fprintf(a.stderr, "forkspace: serving the REST API at %s/v1/ (OpenAPI: /v1/openapi.json)\n", base)
			fmt.Fprintf(a.stderr, "forkspace: serving the dashboard at %s%s\n", base, dashboard.Prefix)
			a.noteAuth(tokens)
			// Commands that find the store busy reach it through here.
			forget, err := recordServer(a.storeDir, base)
			if err != nil {
				ln.Close()
				return fmt.Errorf("serve: %w", err)
			}
			defer forget()
			hs := httpapi.HTTPServer(httpapi.Guard(mux))
			done := make(chan error, 1)
			go func() { done <- t.serve(hs, ln) }()
			select {
			case err = <-done:
			case <-ctx.Done():
				sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
				defer cancel()
				if hs.Shutdown(sctx) != nil {
					hs.Close()
				}
				err = <-done
			}
			if errors.Is(err, http.ErrServerClosed) {
				err = nil
			}
			return err
		},
	}
	c.Flags().StringVar(&addr, "addr", "127.0.0.1:7777", "address to listen on (loopback unless --insecure)")
	c.Flags().StringVar(&webdav, "webdav", "", "also serve every workspace over WebDAV on this address (at /NAME/; loopback unless --insecure)")
	c.Flags().StringVar(&s3addr, "s3", "", "also serve every workspace as an S3 bucket on this address (path-style; keys from FORKSPACE_S3_ACCESS_KEY/FORKSPACE_S3_SECRET_KEY; loopback unless --insecure)")
	c.Flags().DurationVar(&auditKeep, "audit-retention", 0, "prune audit entries (and change-feed events) older than this, hourly (0: keep them all)")
	c.Flags().BoolVar(&insecure, "insecure", false, "allow a non-loopback address without tokens and TLS")
	t.add(c)
	agentFlagSet(c, &f)
	c.Flags().StringVar(&fuseDir, "fuse", "", "also mount every workspace at DIR/<name>/ (FUSE), unmounted when serve stops")
	ff.add(c, "fuse-")
	return c
}
