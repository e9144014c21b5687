package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/spf13/cobra"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/blob/fileblob"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/httpapi"
	"github.com/forkspace/forkspace/sandbox"
	"github.com/forkspace/forkspace/vfs"
)

// app is the state one command line shares: global flags, streams and the
// store, opened on first use and closed when the command ends.
type app struct {
	storeDir string
	blobURL  string // --blob ($FORKSPACE_BLOB): storeurl.go
	metaURL  string // --meta ($FORKSPACE_META): metaurl.go
	state    string // -w: NAME or NAME@CHECKPOINT
	json     bool
	ran      bool // arguments parsed and a command started

	stdin          io.Reader
	stdout, stderr io.Writer
	st             *forkspace.Store
	// execOpts are the sandbox options agent built (serve's REST exec
	// uses them too).
	execOpts sandbox.Options

	// server is --server ($FORKSPACE_SERVER); backend is what commands
	// act through (client.go), remote when it is a server.
	server  string
	token   string // --token ($FORKSPACE_TOKEN), sent to a server
	backend httpapi.API
	remote  bool
	shell   func(context.Context, *forkspace.Workspace) (httpapi.Shell, error)
	// gcProgress draws gc's phases (local store only).
	gcProgress func(phase string, done, total int64)
}

// open opens the store; unless create is set, a directory without a store
// is fs.ErrNotExist (so a typo in --store does not create a new one).
func (a *app) open(ctx context.Context, create bool) (*forkspace.Store, error) {
	if a.st != nil {
		return a.st, nil
	}
	if !create && a.metaURL == "" {
		if _, err := os.Stat(filepath.Join(a.storeDir, "meta.db")); errors.Is(err, fs.ErrNotExist) {
			return nil, &fs.PathError{Op: "open store", Path: a.storeDir, Err: fmt.Errorf("%w: no store here (run 'forkspace init')", fs.ErrNotExist)}
		}
	}
	log := slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	opts, err := a.storeOptions(ctx, log)
	if err != nil {
		return nil, err
	}
	st, err := forkspace.Open(ctx, opts)
	if err != nil {
		return nil, err
	}
	a.st = st
	return st, nil
}

// storeOptions opens the drivers --meta and --blob name (nil for the store
// directory's own) and returns the store's options. PostgreSQL with the
// bytes in a bucket is a store several processes share
// (docs/decisions/023); with a local blob directory it stays one
// process's.
func (a *app) storeOptions(ctx context.Context, log *slog.Logger) (forkspace.Options, error) {
	blobs, err := a.blobStore()
	if err != nil {
		return forkspace.Options{}, err
	}
	_, localBlobs := blobs.(*fileblob.Store)
	shared := a.metaURL != "" && blobs != nil && !localBlobs
	metadata, err := a.metaStore(ctx, log, shared)
	if err != nil {
		return forkspace.Options{}, err
	}
	return forkspace.Options{Dir: a.storeDir, Meta: metadata, Blobs: blobs, Shared: shared, Logger: log,
		MountDrivers: mountDrivers(), OnDelete: sandbox.RemoveWorkDir}, nil
}

// close closes the store if it was opened. It first writes back the
// debounced mount changes the command made (the process would otherwise
// exit before their window); a failure there is a warning, since the
// changes are safe in the workspace and stay pending.
func (a *app) close() error {
	if a.st == nil {
		return nil
	}
	if err := a.st.Settle(context.Background()); err != nil {
		fmt.Fprintf(a.stderr, "forkspace: warning: write-back left pending (see 'mount ls', 'mount flush'): %v\n", err)
	}
	if err := a.st.Close(); err != nil {
		return fmt.Errorf("close store: %w", err)
	}
	return nil
}

// target returns the -w state split into workspace and checkpoint.
func (a *app) target() (ws, cp string, err error) {
	if a.state == "" {
		return "", "", usage("no workspace: use -w NAME[@CHECKPOINT] or set FORKSPACE_WORKSPACE")
	}
	return forkspace.ParseState(a.state)
}

// view returns the filesystem -w names: a live head, or a read-only view
// of a checkpoint (where every write fails with errdefs.ErrReadOnly).
func (a *app) view(ctx context.Context) (*vfs.FS, error) {
	if _, _, err := a.target(); err != nil {
		return nil, err
	}
	return a.viewOf(ctx, a.state)
}

// viewOf returns the filesystem of state (NAME or NAME@CHECKPOINT).
func (a *app) viewOf(ctx context.Context, state string) (*vfs.FS, error) {
	ws, cp, err := forkspace.ParseState(state)
	if err != nil {
		return nil, err
	}
	st, err := a.open(ctx, false)
	if err != nil {
		return nil, err
	}
	if cp != "" {
		return st.Snapshot(ctx, state)
	}
	w, err := st.Workspace(ctx, ws)
	if err != nil {
		return nil, err
	}
	return w.FS, nil
}

// live returns the workspace -w names, which must be a live head, on the
// store itself (for the commands the API does not cover yet).
func (a *app) live(ctx context.Context, op string) (*forkspace.Workspace, error) {
	ws, cp, err := a.target()
	if err != nil {
		return nil, err
	}
	if cp != "" {
		return nil, fmt.Errorf("%s %s: %w: a checkpoint cannot change; use -w %s", op, a.state, errdefs.ErrReadOnly, ws)
	}
	st, err := a.open(ctx, false)
	if err != nil {
		return nil, err
	}
	return st.Workspace(ctx, ws)
}

// args wraps a positional-argument check so its failures are usage errors.
func args(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(c *cobra.Command, a []string) error {
		if err := check(c, a); err != nil {
			return usageError{err}
		}
		return nil
	}
}
