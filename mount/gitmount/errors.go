package gitmount

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"

	"github.com/go-git/go-git/v5"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/transport"
)

var (
	// ErrRefNotFound means the ref or the subtree does not exist in the
	// repository; it always comes with fs.ErrNotExist.
	ErrRefNotFound = errors.New("ref not found")
	// ErrUnreachable means the server could not be reached at all
	// (connection refused, DNS failure, timeout).
	ErrUnreachable = errors.New("git server unreachable")
)

// kinds maps go-git's sentinels to the ones callers test for.
var kinds = []struct{ from, to error }{
	{transport.ErrRepositoryNotFound, fs.ErrNotExist},
	{git.ErrRepositoryNotExists, fs.ErrNotExist},
	{transport.ErrEmptyRemoteRepository, fs.ErrNotExist},
	{transport.ErrAuthenticationRequired, fs.ErrPermission},
	{transport.ErrAuthorizationFailed, fs.ErrPermission},
	{transport.ErrInvalidAuthMethod, fs.ErrPermission},
	{plumbing.ErrReferenceNotFound, fs.ErrNotExist},
	{plumbing.ErrObjectNotFound, fs.ErrNotExist},
}

// classify returns the sentinel for a go-git error, or nil (also for a
// canceled or expired context, whose error is also a net.Error).
func classify(err error) error {
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return nil
	}
	for _, k := range kinds {
		if errors.Is(err, k.from) {
			return k.to
		}
	}
	var netErr net.Error
	if errors.As(err, &netErr) {
		return ErrUnreachable
	}
	return nil
}

// wrap translates a go-git error, keeping the cause: "op: <sentinel>:
// <cause>".
func wrap(op string, err error) error {
	if s := classify(err); s != nil {
		return fmt.Errorf("%s: %w: %w", op, s, err)
	}
	return fmt.Errorf("%s: %w", op, err)
}

// refNotFound is the error of a missing ref or subtree.
func refNotFound(op, what string) error {
	return fmt.Errorf("%s: %w: %w: %s", op, fs.ErrNotExist, ErrRefNotFound, what)
}
