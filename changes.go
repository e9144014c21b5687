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
// lists; past it the entry lists "." alone (anything may have changed),
// as it does after a change of the whole tree (a restore, an index of a
// mount's root).
const MaxUncoveredPaths = 256

// stepDoor is the door whose uncovered changes are steps of their
// workspace's history (isStep): a gathering records all of them, of
// every kind, as one entry per workspace and actor.
const stepDoor = "fuse"

// uncovered records the changes to workspaces that no audited call
// covers (audit.Cover): FUSE operations, mount indexing and hydration,
// write-backs, library calls on a plain Workspace. Every open workspace's
// vfs.FS.Watch reports to it; a goroutine appends what is pending in one
// transaction, a moment (gatherDelay) after the first change of a burst:
// one entry per (workspace, actor) of the FUSE operations, whatever their
// kinds ("fuse.mkdir+open+chmod"), so a gathering records one history
// state per workspace; one entry per (workspace, tool, actor) of the rest.
// An audited call and a reader of the log (audit.Log.BeforeRecord) append
// what is pending first, so neither sees the log out of order or behind.
type uncovered struct {
	log *audit.Log
	s   *Store
	// flushing is held while pending entries are appended, so a flush
	// before an audited call (audit.Log.BeforeRecord) also waits for one
	// already under way.
	flushing sync.Mutex
	mu       sync.Mutex
	order    []groupKey // pending groups, first seen first
	groups   map[groupKey]*group
	kick     chan struct{}
	stop     chan struct{}
	done     chan struct{}
}

// groupKey identifies the changes one entry records: op is the vfs
// operation, "" for stepDoor's, whose kinds share an entry.
type groupKey struct {
	ws, door, op string
	actor        audit.Actor
}

// group is what one pending entry gathered: the operation kinds, first
// seen first, and the paths they changed (all: anything may have).
type group struct {
	ops, paths []string
	all        bool
}

// entry returns the audit entry of g, the changes k gathered.
func (g *group) entry(k groupKey) audit.Entry {
	return audit.Entry{WorkspaceID: k.ws, Tool: k.door + "." + strings.Join(g.ops, "+"),
		Actor: k.actor.Name, Session: k.actor.Session, Changed: g.paths}
}

func (s *Store) startUncovered() {
	u := &uncovered{log: s.audit, s: s, groups: map[groupKey]*group{},
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
		door, op := kindOf(ctx, e)
		k := groupKey{ws: id, door: door, op: op, actor: audit.ActorFrom(ctx)}
		if door == stepDoor {
			k.op = ""
		}
		u.add(k, op, e)
	}
}

// kindOf names an uncovered change by its door and operation: the
// mounts' own work as "mount" and what it is, anything else by the door
// (audit.WithSurface; "library" if none) and the vfs operation.
func kindOf(ctx context.Context, e vfs.Event) (door, op string) {
	switch e.Op {
	case "populate":
		return "mount", "index"
	case "fill":
		return "mount", "hydrate"
	}
	door = audit.SurfaceFrom(ctx)
	if door == "" {
		door = "library"
	}
	return door, e.Op
}

// add notes that operation op changed e.Name in group k. A group lists
// each path once; once anything may have changed (an event of the whole
// tree, or more than MaxUncoveredPaths paths) it lists "." alone.
func (u *uncovered) add(k groupKey, op string, e vfs.Event) {
	u.mu.Lock()
	g, ok := u.groups[k]
	if !ok {
		g = &group{}
		u.groups[k] = g
		u.order = append(u.order, k)
	}
	if !slices.Contains(g.ops, op) {
		g.ops = append(g.ops, op)
	}
	switch {
	case g.all || slices.Contains(g.paths, e.Name):
	case e.Tree && e.Name == "." || len(g.paths) == MaxUncoveredPaths:
		g.paths, g.all = []string{"."}, true
	default:
		g.paths = append(g.paths, e.Name)
	}
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
	order, groups := u.order, u.groups
	u.order, u.groups = nil, map[groupKey]*group{}
	u.mu.Unlock()
	if len(order) == 0 {
		return
	}
	es := make([]audit.Entry, 0, len(order))
	for _, k := range order {
		es = append(es, groups[k].entry(k))
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
func isStep(e audit.Entry) bool { return strings.HasPrefix(e.Tool, stepDoor+".") }

// close records what is pending and stops the goroutine.
func (u *uncovered) close() {
	close(u.stop)
	<-u.done
}
