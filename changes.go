package forkspace

import (
	"context"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/forkspace/forkspace/audit"
	"github.com/forkspace/forkspace/feed"
	"github.com/forkspace/forkspace/vfs"
)

// Feed returns the store's change feed: every entry of its audit log, in
// Seq order, live (package feed, docs/decisions/017-change-feed.md).
func (s *Store) Feed() *feed.Feed { return s.feed }

// MaxUncoveredPaths bounds the paths one entry of uncovered changes
// lists; past it the entry lists "." (anything may have changed).
const MaxUncoveredPaths = 256

// uncovered records the changes to workspaces that no audited call
// covers (audit.Cover): FUSE operations, mount indexing and hydration,
// write-backs, library calls on a plain Workspace. Every open workspace's
// vfs.FS.Watch reports to it; a goroutine appends what is pending, one
// entry per (workspace, tool, actor), in one transaction, a moment
// (gatherDelay) after the first change of a burst.
type uncovered struct {
	log *audit.Log
	s   *Store
	// flushing is held while pending entries are appended, so a flush
	// before an audited call (audit.Log.BeforeRecord) also waits for one
	// already under way.
	flushing sync.Mutex
	mu       sync.Mutex
	order    []groupKey // pending groups, first seen first
	paths    map[groupKey][]string
	kick     chan struct{}
	stop     chan struct{}
	done     chan struct{}
}

type groupKey struct {
	ws, tool string
	actor    audit.Actor
}

func (s *Store) startUncovered() {
	u := &uncovered{log: s.audit, s: s, paths: map[groupKey][]string{},
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	s.uncovered = u
	s.audit.BeforeRecord(u.flush)
	go u.run()
}

// watch is the vfs.FS.Watch callback of workspace id.
func (u *uncovered) watch(id string) func(context.Context, vfs.Event) {
	return func(ctx context.Context, e vfs.Event) {
		if e.Remote || audit.Covered(ctx, id) { // another process recorded a remote change
			return
		}
		u.add(groupKey{ws: id, tool: toolOf(ctx, e), actor: audit.ActorFrom(ctx)}, e.Name)
	}
}

// toolOf names an uncovered change: the mounts' own work by what it is,
// anything else by the door (audit.WithSurface; "library" if none) and
// the vfs operation.
func toolOf(ctx context.Context, e vfs.Event) string {
	switch e.Op {
	case "populate":
		return "mount.index"
	case "fill":
		return "mount.hydrate"
	}
	surface := audit.SurfaceFrom(ctx)
	if surface == "" {
		surface = "library"
	}
	return surface + "." + e.Op
}

func (u *uncovered) add(k groupKey, name string) {
	u.mu.Lock()
	ps, ok := u.paths[k]
	if !ok {
		u.order = append(u.order, k)
	}
	switch {
	case len(ps) == 1 && ps[0] == ".":
	case name == "." || len(ps) == MaxUncoveredPaths:
		ps = []string{"."}
	case !slices.Contains(ps, name):
		ps = append(ps, name)
	}
	u.paths[k] = ps
	u.mu.Unlock()
	select {
	case u.kick <- struct{}{}:
	default:
	}
}

// gatherDelay is how long the recorder lets a burst of uncovered changes
// gather before it appends them: a program working through a FUSE mount
// makes one change after another, each waiting for the last, and without
// the pause each would cost an audit transaction of its own (with a
// history state and its pruning) beside its own.
const gatherDelay = 5 * time.Millisecond

func (u *uncovered) run() {
	defer close(u.done)
	for {
		select {
		case <-u.kick:
			select {
			case <-time.After(gatherDelay):
			case <-u.stop:
			}
			u.flush()
		case <-u.stop:
			u.flush()
			return
		}
	}
}

// flush records every pending group.
func (u *uncovered) flush() {
	u.flushing.Lock()
	defer u.flushing.Unlock()
	u.mu.Lock()
	order, paths := u.order, u.paths
	u.order, u.paths = nil, map[groupKey][]string{}
	u.mu.Unlock()
	if len(order) == 0 {
		return
	}
	es := make([]audit.Entry, 0, len(order))
	for _, k := range order {
		es = append(es, audit.Entry{WorkspaceID: k.ws, Tool: k.tool, Actor: k.actor.Name, Session: k.actor.Session, Changed: paths[k]})
	}
	if err := u.log.RecordAll(context.Background(), es, isStep); err != nil {
		u.s.log.Error("record uncovered changes", "entries", len(es), "err", err)
	}
}

// isStep reports whether an entry of uncovered changes is a step of its
// workspace's history (records a state): changes made through a FUSE
// mount are, as an agent's or a person's work; a mount's own indexing and
// hydration are not, nor plain library calls (the library records steps
// through audited calls, audit.Run).
func isStep(e audit.Entry) bool { return strings.HasPrefix(e.Tool, "fuse.") }

// close records what is pending and stops the goroutine.
func (u *uncovered) close() {
	close(u.stop)
	<-u.done
}
