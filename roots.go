package forkspace

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"github.com/forkspace/forkspace/meta"
)

// rootsLock is the store's roots lock (docs/gc.md): operations that read
// a root in one transaction and record it in another hold it shared
// (hold), a collection reading its roots exclusively (its Lock and
// Unlock, gc.Options.Lock). In a store several processes share
// (Options.Shared) it is also held across them, through the metadata
// database (meta.Locker), so no collection on any node misses a root in
// transit on another.
type rootsLock struct {
	local  sync.RWMutex
	across meta.Locker // nil: this process alone
	log    *slog.Logger
	unlock func() // the cross-process lock Lock took
}

// rootsKey names the cross-process roots lock.
const rootsKey = "forkspace.roots"

// hold takes the lock shared and returns its release.
func (l *rootsLock) hold(ctx context.Context) (func(), error) {
	return lockBoth(ctx, l.local.RLock, l.local.RUnlock, l.across, rootsKey, true)
}

// lockBoth takes a process's lock (lock, released by unlock), then, when
// across is not nil, the cross-process lock key, and returns the release
// of both.
func lockBoth(ctx context.Context, lock, unlock func(), across meta.Locker, key string, shared bool) (func(), error) {
	lock()
	if across == nil {
		return unlock, nil
	}
	release, err := across.Lock(ctx, key, shared)
	if err != nil {
		unlock()
		return nil, err
	}
	return func() { release(); unlock() }, nil
}

// Lock takes the lock exclusively for a collection. sync.Locker has no
// way to fail, so a cross-process lock that cannot be taken (the
// database unreachable) is tried again every second until it is.
func (l *rootsLock) Lock() {
	l.local.Lock()
	if l.across == nil {
		return
	}
	for {
		unlock, err := l.across.Lock(context.Background(), rootsKey, false)
		if err == nil {
			l.unlock = unlock
			return
		}
		l.log.Warn("take the roots lock; trying again in 1 s", "err", err)
		time.Sleep(time.Second)
	}
}

// Unlock releases what Lock took.
func (l *rootsLock) Unlock() {
	if l.unlock != nil {
		l.unlock()
		l.unlock = nil
	}
	l.local.Unlock()
}
