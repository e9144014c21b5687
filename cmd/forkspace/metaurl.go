package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net/url"

	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/meta/pgmeta"
)

// metaStore opens the metadata database --meta ($FORKSPACE_META) names, or
// returns nil for the store directory's own (meta.db under --store):
//
//	postgres://[USER@]HOST[:PORT]/DB?sslmode=…   PostgreSQL over TCP
//	postgres:///DB?host=/SOCKET/DIR              PostgreSQL on a unix socket
//
// The password comes from the environment (PGPASSWORD, ~/.pgpass); a URL
// carrying one is refused. A store whose bytes are in a local directory
// holds the database's owner lock while it is open
// (pgmeta.Options.Exclusive): a second process gets ErrBusy. With shared
// (the bytes in a bucket) any number of processes open it at once
// (pgmeta.Options.Shared, docs/decisions/023).
func (a *app) metaStore(ctx context.Context, log *slog.Logger, shared bool) (meta.Store, error) {
	if a.metaURL == "" {
		return nil, nil
	}
	u, err := url.Parse(a.metaURL)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return nil, usage("--meta: want a postgres://… URL (the default is meta.db in the store directory)")
	}
	m, err := pgmeta.Open(ctx, a.metaURL, pgmeta.Options{Logger: log, Exclusive: !shared, Shared: shared})
	if errors.Is(err, fs.ErrInvalid) {
		return nil, usage("--meta: %v", err)
	}
	if err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	return m, nil
}
