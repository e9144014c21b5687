package main

import (
	"context"
	"log/slog"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/audit"
	"github.com/forkspace/forkspace/auth"
	"github.com/forkspace/forkspace/httpapi"
	"github.com/forkspace/forkspace/sandbox"
)

// restAPI is serve's REST API over the store agent opened: every mutation
// audited (actor "rest" unless the request names one), exec in the
// sandbox with the server's options, recorded by the shell.
func (a *app) restAPI(tokens *auth.Tokens) *httpapi.Server {
	opts := a.execOpts
	opts.Audit = a.st.AuditLog()
	local := httpapi.NewLocal(a.st, httpapi.LocalOptions{
		Audit:        a.st.AuditLog(),
		Actor:        audit.Actor{Name: "rest"},
		MountDrivers: mountDrivers(),
		Shell: func(_ context.Context, w *forkspace.Workspace) (httpapi.Shell, error) {
			return sandbox.New(w, opts), nil
		},
	})
	log := slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	return httpapi.NewServer(httpapi.Options{API: local, Logger: log, Tokens: tokens})
}
