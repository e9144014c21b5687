package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/forkspace/forkspace/httpapi"
	"github.com/forkspace/forkspace/webdavfs"
)

// serveWebDAV serves the open store over WebDAV on addr (its own
// listener, every workspace at /NAME/), with the same loopback rule as
// --addr. stop shuts it down.
func (a *app) serveWebDAV(ctx context.Context, addr string, insecure bool) (stop func(), err error) {
	local, err := httpapi.LoopbackAddr(ctx, addr)
	if err != nil {
		return nil, usage("--webdav: %v", err)
	}
	if !local && !insecure {
		return nil, usage("--webdav %s is reachable from other hosts and serve has no authentication yet: listen on a loopback address (127.0.0.1:PORT), or pass --insecure", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("serve webdav: %w", err)
	}
	log := slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	hs := &http.Server{
		Handler:           httpapi.Guard(webdavfs.New(a.st, webdavfs.Options{Logger: log})),
		ReadHeaderTimeout: 10 * time.Second,
	}
	fmt.Fprintf(a.stderr, "forkspace: serving WebDAV at http://%s/ (a workspace at /NAME/)\n", ln.Addr())
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	return func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		if hs.Shutdown(sctx) != nil {
			hs.Close()
		}
		if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn("webdav server", "err", err)
		}
	}, nil
}
