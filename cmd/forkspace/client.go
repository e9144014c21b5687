package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/audit"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/httpapi"
)

// serverFile, beside the store's lock, holds the base URL of the serve
// process that has the store open, so a command that finds the store busy
// goes through it.
const serverFile = "server"

// api returns what the commands act through: the server named by
// --server or $FORKSPACE_SERVER; else the store opened in this process;
// else, when a serve process holds the store, that server (found in the
// store's serverFile).
func (a *app) api(ctx context.Context) (httpapi.API, error) {
	if a.gcProgress == nil {
		a.gcProgress = func(string, int64, int64) {}
	}
	if a.backend != nil {
		return a.backend, nil
	}
	if a.server != "" {
		return a.dial(a.server)
	}
	st, err := a.open(ctx, false)
	if errors.Is(err, errdefs.ErrBusy) && a.served() {
		url, _ := os.ReadFile(filepath.Join(a.storeDir, serverFile))
		return a.dial(strings.TrimSpace(string(url)))
	}
	if err != nil {
		return nil, err
	}
	// The CLI's mutations are in the audit log like every other door's
	// (issue 14: 'forkspace log' was empty after the README's CLI flow).
	a.backend = httpapi.NewLocal(st, httpapi.LocalOptions{
		Audit:        st.AuditLog(),
		Actor:        audit.Actor{Name: "cli"},
		Surface:      "cli",
		MountDrivers: mountDrivers(),
		Shell:        a.shell,
		GCProgress:   func(phase string, done, total int64) { a.gcProgress(phase, done, total) },
		FiniteEvents: true, // watch: no other process can change the store
	})
	return a.backend, nil
}

// served reports whether a server recorded its address in the store.
func (a *app) served() bool {
	_, err := os.Stat(filepath.Join(a.storeDir, serverFile))
	return err == nil
}

// dial makes the backend a client of the server at url.
func (a *app) dial(url string) (httpapi.API, error) {
	c, err := httpapi.NewClient(url, httpapi.ClientOptions{Actor: audit.Actor{Name: "cli"}, Token: a.token})
	if err != nil {
		return nil, usage("--server: %v", err)
	}
	a.backend, a.remote = c, true
	return c, nil
}

// recordServer writes url to the store's serverFile (atomically) and
// returns a function removing it.
func recordServer(storeDir, url string) (func(), error) {
	path := filepath.Join(storeDir, serverFile)
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(url+"\n"), 0o600); err != nil {
		return nil, err
	}
	if err := os.Rename(tmp, path); err != nil {
		return nil, err
	}
	return func() { os.Remove(path) }, nil
}

// workspaces lists every workspace, page by page.
func (a *app) workspaces(ctx context.Context) ([]forkspace.Info, error) {
	api, err := a.api(ctx)
	if err != nil {
		return nil, err
	}
	all := []forkspace.Info{}
	for cur := ""; ; {
		p, err := api.ListWorkspaces(ctx, httpapi.PageRequest{Cursor: cur, Limit: httpapi.MaxLimit})
		if err != nil {
			return nil, err
		}
		all = append(all, p.Workspaces...)
		if cur = p.Next; cur == "" {
			return all, nil
		}
	}
}

// files returns the -w state for a file command, with the backend ready.
func (a *app) files(ctx context.Context) (string, error) {
	if _, _, err := a.target(); err != nil {
		return "", err
	}
	if _, err := a.api(ctx); err != nil {
		return "", err
	}
	return a.state, nil
}

// isDir reports whether p is a directory (or a link to one) in state ws.
func (a *app) isDir(ctx context.Context, ws, p string) bool {
	_, err := a.backend.ReadDir(ctx, ws, p, httpapi.PageRequest{Limit: 1})
	return err == nil
}
