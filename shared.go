package forkspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/forkspace/forkspace/blob/fileblob"
	"github.com/forkspace/forkspace/meta"
)

// A store several processes share (Options.Shared, docs/decisions/023).
// Each process keeps its open workspaces' heads in memory; commits fence
// on the head generation, so none lands on an out-of-date head. What
// other processes commit arrives here by notification: a workspace's new
// head generation (the open workspace reloads), its deletion (the
// workspace is forgotten), a new audit entry (the change feed publishes
// it). One goroutine applies them, coalesced, so a burst of commits
// elsewhere costs one reload per workspace.

// sharing follows other processes' changes.
type sharing struct {
	listener meta.Listener
	cancel   context.CancelFunc
	done     chan struct{}
	wake     chan struct{} // one pending signal

	mu    sync.Mutex
	heads map[string]int64 // workspace ID -> newest generation heard (-1: deleted)
	audit int64            // newest audit sequence heard
	all   bool             // notifications may have been missed: catch up on everything
}

// share checks that the drivers can be shared and sets up the sharing
// state and the cross-process locks.
func (s *Store) share() error {
	l, lok := s.meta.(meta.Listener)
	locker, kok := s.meta.(meta.Locker)
	if !lok || !kok {
		return fmt.Errorf("open store: %w: shared by several processes, but the metadata database cannot be (use PostgreSQL)", fs.ErrInvalid)
	}
	if _, local := s.blobs.(*fileblob.Store); local {
		return fmt.Errorf("open store: %w: shared by several processes, but the file bytes are in a local directory (use an S3 bucket)", fs.ErrInvalid)
	}
	s.roots.across, s.roots.log = locker, s.log
	s.sharing = &sharing{listener: l, heads: make(map[string]int64), wake: make(chan struct{}, 1), done: make(chan struct{})}
	return nil
}

// startSharing starts listening for other processes' changes.
func (s *Store) startSharing() {
	sh := s.sharing
	if sh == nil {
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	sh.cancel = cancel
	var wg sync.WaitGroup
	wg.Go(func() {
		_ = sh.listener.Listen(ctx, []string{meta.ChannelHeads, meta.ChannelAudit}, sh.heard)
	})
	wg.Go(func() { s.applyHeard(ctx) })
	go func() {
		wg.Wait()
		close(sh.done)
	}()
}

// stopSharing stops listening and waits for the goroutines.
func (s *Store) stopSharing() {
	if s.sharing == nil || s.sharing.cancel == nil {
		return
	}
	s.sharing.cancel()
	<-s.sharing.done
}

// heard records a notification for applyHeard.
func (sh *sharing) heard(n meta.Notification) {
	sh.mu.Lock()
	switch n.Channel {
	case "":
		sh.all = true
	case meta.ChannelAudit:
		if seq, err := strconv.ParseInt(n.Payload, 10, 64); err == nil {
			sh.audit = max(sh.audit, seq)
		}
	case meta.ChannelHeads:
		id, g, ok := strings.Cut(n.Payload, " ")
		gen, err := strconv.ParseInt(g, 10, 64)
		if ok && err == nil {
			if old, seen := sh.heads[id]; !seen || gen < 0 || (old >= 0 && gen > old) {
				sh.heads[id] = gen
			}
		}
	}
	sh.mu.Unlock()
	select {
	case sh.wake <- struct{}{}:
	default:
	}
}

// applyHeard applies what heard recorded until ctx ends.
func (s *Store) applyHeard(ctx context.Context) {
	sh := s.sharing
	for {
		select {
		case <-ctx.Done():
			return
		case <-sh.wake:
		}
		sh.mu.Lock()
		heads, audit, all := sh.heads, sh.audit, sh.all
		sh.heads, sh.all = make(map[string]int64), false
		sh.mu.Unlock()
		if all {
			for _, w := range s.openWorkspaces() {
				heads[w.id] = max(heads[w.id], w.HeadGen()+1) // +1: ask the database
			}
		}
		for id, gen := range heads {
			if err := s.applyHead(ctx, id, gen); err != nil && ctx.Err() == nil {
				s.log.Warn("follow another process's change", "workspace", id, "err", err)
			}
		}
		if audit > 0 || all {
			s.feed.Heard(ctx, audit)
		}
	}
}

// applyHead brings open workspace id to generation gen (-1: deleted).
func (s *Store) applyHead(ctx context.Context, id string, gen int64) error {
	s.mu.Lock()
	w := s.open[id]
	s.mu.Unlock()
	if w == nil {
		return nil
	}
	var err error
	if gen >= 0 {
		err = w.Notice(ctx, gen)
	}
	if gen < 0 || errors.Is(err, fs.ErrNotExist) {
		return s.forget(ctx, id)
	}
	return err
}

// openWorkspaces returns the open workspaces.
func (s *Store) openWorkspaces() []*Workspace {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Collect(maps.Values(s.open))
}
