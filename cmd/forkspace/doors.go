package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"time"

	"github.com/forkspace/forkspace/auth"
	"github.com/forkspace/forkspace/httpapi"
	"github.com/forkspace/forkspace/s3gw"
	"github.com/forkspace/forkspace/webdavfs"
)

// A door is another protocol serve offers on a listener of its own
// (--webdav, --s3), beside MCP.
type door struct {
	flag    string // "--webdav"
	name    string // "WebDAV"
	handler func(a *app, log *slog.Logger) (http.Handler, string, error)
}

var (
	webdavDoor = door{flag: "--webdav", name: "WebDAV", handler: func(a *app, log *slog.Logger) (http.Handler, string, error) {
		tokens, err := a.st.Tokens(context.Background())
		if err != nil {
			return nil, "", err
		}
		return basicToken(tokens, httpapi.Authenticate(tokens, webdavfs.New(a.st, webdavfs.Options{Logger: log}))), "a workspace at /NAME/", nil
	}}
	s3Door = door{flag: "--s3", name: "S3", handler: func(a *app, log *slog.Logger) (http.Handler, string, error) {
		tokens, err := a.st.Tokens(context.Background())
		if err != nil {
			return nil, "", err
		}
		if tokens.Enabled() {
			creds := func(string) (string, bool) { return "", false }
			return s3gw.New(a.st, s3gw.Options{Credentials: creds, Tokens: tokens, Logger: log}), "path-style, a workspace per bucket; keys: a token's ID and S3 secret key ('forkspace token create')", nil
		}
		key, secret, generated, err := s3Credentials()
		if err != nil {
			return nil, "", err
		}
		note := "path-style, a workspace per bucket; access key " + key
		if generated {
			note += ", secret key " + secret + " (generated: set FORKSPACE_S3_ACCESS_KEY and FORKSPACE_S3_SECRET_KEY to choose them)"
		}
		creds := func(k string) (string, bool) { return secret, k == key }
		return s3gw.New(a.st, s3gw.Options{Credentials: creds, Tokens: tokens, Logger: log}), note, nil
	}}
)

// s3Credentials are the S3 door's key pair: from FORKSPACE_S3_ACCESS_KEY
// and FORKSPACE_S3_SECRET_KEY, or made up for this run.
func s3Credentials() (key, secret string, generated bool, err error) {
	key, secret = os.Getenv("FORKSPACE_S3_ACCESS_KEY"), os.Getenv("FORKSPACE_S3_SECRET_KEY")
	if (key == "") != (secret == "") {
		return "", "", false, usage("set both FORKSPACE_S3_ACCESS_KEY and FORKSPACE_S3_SECRET_KEY, or neither")
	}
	if key != "" {
		return key, secret, false, nil
	}
	b := make([]byte, 30)
	if _, err := rand.Read(b); err != nil {
		return "", "", false, err
	}
	return "FS" + hex.EncodeToString(b[:9]), hex.EncodeToString(b[9:]), true, nil
}

// open serves the door on addr (loopback unless insecure) until stop.
func (d door) open(ctx context.Context, a *app, addr string, insecure bool) (stop func(), err error) {
	local, err := httpapi.LoopbackAddr(ctx, addr)
	if err != nil {
		return nil, usage("%s: %v", d.flag, err)
	}
	if !local && !insecure {
		return nil, usage("%s %s is reachable from other hosts: listen on a loopback address (127.0.0.1:PORT), or pass --insecure", d.flag, addr)
	}
	log := slog.New(slog.NewTextHandler(a.stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	h, note, err := d.handler(a, log)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("serve %s: %w", d.name, err)
	}
	hs := &http.Server{Handler: httpapi.Guard(h), ReadHeaderTimeout: 10 * time.Second}
	fmt.Fprintf(a.stderr, "forkspace: serving %s at http://%s/ (%s)\n", d.name, ln.Addr(), note)
	done := make(chan error, 1)
	go func() { done <- hs.Serve(ln) }()
	return func() {
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 2*time.Second)
		defer cancel()
		if hs.Shutdown(sctx) != nil {
			hs.Close()
		}
		if err := <-done; err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Warn(d.name+" server", "err", err)
		}
	}, nil
}

// basicToken turns HTTP Basic credentials whose password is a token
// (any user name) into the bearer token Authenticate reads: WebDAV
// clients (davfs2, cadaver, desktops) send Basic, not Bearer, and only
// once challenged to.
func basicToken(tokens *auth.Tokens, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, pass, ok := r.BasicAuth(); ok {
			r.Header.Set("Authorization", "Bearer "+pass)
		} else if tokens.Enabled() && r.Header.Get("Authorization") == "" {
			w.Header().Set("WWW-Authenticate", `Basic realm="forkspace (password: a token)"`)
			http.Error(w, "this server needs a token: send it as the password (any user name)", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	})
}
