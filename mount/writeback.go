package mount

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/vfs"
)

// writeBack tracks the paths under read-write mounts whose final state
// still has to reach the source. The set is persisted (a store setting
// per workspace, pendingKey) whenever a path joins or leaves it, so a
// restart resumes it.
type writeBack struct {
	m *Manager

	mu      sync.Mutex
	pending map[string]map[string]*pendingPath // root → rel
	closed  bool
	timers  sync.WaitGroup // write-backs started by timers

	persistMu sync.Mutex // orders persisted snapshots
}

// pendingPath is one path waiting for write-back; gen counts its marks, so
// a flush that raced with a new write keeps it pending.
type pendingPath struct {
	gen   uint64
	timer *time.Timer
}

// pendingKey is the setting that holds a workspace's pending write-back.
func pendingKey(workspaceID string) string { return "mount.pending." + workspaceID }

func (wb *writeBack) init(m *Manager) {
	wb.m = m
	wb.pending = map[string]map[string]*pendingPath{}
}

// load reads the persisted pending set and schedules it again.
func (wb *writeBack) load(ctx context.Context) error {
	var raw string
	err := wb.m.cfg.Meta.View(ctx, func(tx meta.Tx) error {
		var err error
		raw, err = tx.Setting(pendingKey(wb.m.cfg.Context.WorkspaceID))
		return err
	})
	if isNotExist(err) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("load pending write-back: %w", err)
	}
	var saved map[string][]string
	if err := json.Unmarshal([]byte(raw), &saved); err != nil {
		return fmt.Errorf("load pending write-back: %w: %w", errdefs.ErrCorrupt, err)
	}
	for root, rels := range saved {
		rows, err := wb.m.byRoot(root)
		if err != nil {
			continue // the mount left the table: nothing to write to
		}
		for _, rel := range rels {
			wb.schedule(rows[0], rel)
		}
	}
	return nil
}

// mark records a mutation of rel under mt and persists the set when rel
// is new to it.
func (wb *writeBack) mark(mt *mounted, rel string) {
	if wb.schedule(mt, rel) {
		if err := wb.persist(context.Background()); err != nil {
			wb.m.log.Warn("persist pending write-back", "root", mt.spec.Root, "path", rel, "err", err)
		}
	}
}

// schedule adds rel to the pending set (restarting its debounce timer)
// and reports whether it was new.
func (wb *writeBack) schedule(mt *mounted, rel string) bool {
	wb.mu.Lock()
	defer wb.mu.Unlock()
	root := mt.spec.Root
	paths := wb.pending[root]
	if paths == nil {
		paths = map[string]*pendingPath{}
		wb.pending[root] = paths
	}
	p, known := paths[rel]
	if !known {
		p = &pendingPath{}
		paths[rel] = p
	}
	p.gen++
	if p.timer != nil && p.timer.Stop() {
		wb.timers.Done() // the stopped timer's callback will not run
	}
	p.timer = nil
	if mt.spec.Options.WriteBack == Debounce && !wb.closed {
		window := time.Duration(mt.spec.Options.WriteBackMs) * time.Millisecond
		wb.timers.Add(1)
		var t *time.Timer
		t = time.AfterFunc(window, func() {
			defer wb.timers.Done()
			wb.mu.Lock()
			live := paths[rel] == p && p.timer == t && !wb.closed
			wb.mu.Unlock()
			if !live {
				return
			}
			if err := wb.m.flushPath(context.Background(), mt, rel); err != nil {
				wb.m.log.Warn("write back", "root", root, "path", rel, "err", err)
			}
		})
		p.timer = t
	}
	return !known
}

// persist stores the pending set.
func (wb *writeBack) persist(ctx context.Context) error {
	wb.persistMu.Lock()
	defer wb.persistMu.Unlock()
	wb.mu.Lock()
	saved := map[string][]string{}
	for root, paths := range wb.pending {
		if len(paths) > 0 {
			saved[root] = slices.Sorted(maps.Keys(paths))
		}
	}
	wb.mu.Unlock()
	b, err := json.Marshal(saved)
	if err != nil {
		return err
	}
	return wb.m.cfg.Meta.Update(ctx, func(tx meta.Tx) error {
		return tx.SetSetting(pendingKey(wb.m.cfg.Context.WorkspaceID), string(b))
	})
}

// take returns rel's generation, stopping its timer, or false if rel is
// not pending.
func (wb *writeBack) take(root, rel string) (uint64, bool) {
	wb.mu.Lock()
	defer wb.mu.Unlock()
	p, ok := wb.pending[root][rel]
	if !ok {
		return 0, false
	}
	if p.timer != nil && p.timer.Stop() {
		wb.timers.Done() // the stopped timer's callback will not run
	}
	p.timer = nil
	return p.gen, true
}

// done drops rel from the pending set unless it was marked again after
// generation gen, and persists the set.
func (wb *writeBack) done(ctx context.Context, root, rel string, gen uint64) error {
	wb.mu.Lock()
	p, ok := wb.pending[root][rel]
	drop := ok && p.gen == gen
	if drop {
		delete(wb.pending[root], rel)
	}
	wb.mu.Unlock()
	if !drop {
		return nil
	}
	return wb.persist(ctx)
}

// list returns the pending paths of root, sorted.
func (wb *writeBack) list(root string) []string {
	wb.mu.Lock()
	defer wb.mu.Unlock()
	return slices.Sorted(maps.Keys(wb.pending[root]))
}

// pendingSet returns the pending paths of mt as a set.
func (wb *writeBack) pendingSet(mt *mounted) pathSet {
	out := pathSet{}
	for _, rel := range wb.list(mt.spec.Root) {
		out[rel] = true
	}
	return out
}

// pathSet is a set of mount-relative paths.
type pathSet map[string]bool

// covers reports whether rel or one of its parents is in the set.
func (s pathSet) covers(rel string) bool {
	for p := rel; ; p = path.Dir(p) {
		if s[p] {
			return true
		}
		if !strings.Contains(p, "/") {
			return false
		}
	}
}

// close stops the timers and waits for write-backs they started.
func (wb *writeBack) close() {
	wb.mu.Lock()
	wb.closed = true
	for _, paths := range wb.pending {
		for _, p := range paths {
			if p.timer != nil && p.timer.Stop() {
				wb.timers.Done()
			}
			p.timer = nil
		}
	}
	wb.mu.Unlock()
	wb.timers.Wait()
}

// Pending returns the paths (relative to root) waiting for write-back to
// root's source (nil for a root that is not mounted).
func (m *Manager) Pending(root string) []string {
	rows, err := m.byRoot(root)
	if err != nil || root == "" {
		return nil
	}
	return m.wb.list(rows[0].spec.Root)
}

// Flush writes the pending changes under root (every read-write mount for
// "") to their sources now, Concurrency at a time, and returns their
// errors joined. A change that conflicts with the source (errdefs.
// ErrConflict) is reported to the conflict hook and dropped; a failed put
// is reported and stays pending.
func (m *Manager) Flush(ctx context.Context, root string) error {
	rows, err := m.byRoot(root)
	if err != nil {
		return err
	}
	var errs []error
	for _, mt := range rows {
		rels := m.wb.list(mt.spec.Root)
		errs = append(errs, m.parallel(rels, func(rel string) error { return m.flushPath(ctx, mt, rel) }))
	}
	return errors.Join(errs...)
}

// flushPath writes rel's final state to mt's source: a regular file is
// Put (with its last known version as the precondition), a missing path
// is Deleted (with what the source lists below it, for a removed
// directory), a directory or symbolic link stays local.
func (m *Manager) flushPath(ctx context.Context, mt *mounted, rel string) error {
	return m.flights.do("flush\x00"+mt.spec.Root+"\x00"+rel, func() error {
		gen, ok := m.wb.take(mt.spec.Root, rel)
		if !ok {
			return nil
		}
		err := m.writeBackPath(ctx, mt, rel)
		if err != nil && !errors.Is(err, errdefs.ErrConflict) {
			return err // stays pending
		}
		return errors.Join(err, m.wb.done(ctx, mt.spec.Root, rel, gen))
	})
}

func (m *Manager) writeBackPath(ctx context.Context, mt *mounted, rel string) error {
	mnt, _, err := m.build(ctx, mt)
	if err != nil {
		return err
	}
	local, err := m.local(ctx, mt)
	if err != nil {
		return err
	}
	w, ok := mnt.(Writable)
	if local || !ok {
		return nil
	}
	fi, err := m.cfg.FS.Lstat(ctx, mt.join(rel))
	switch {
	case isNotExist(err):
		return m.deleteUpstream(ctx, mt, mnt, w, rel, true)
	case err != nil:
		return err
	case fi.IsDir():
		// A directory renamed into place or recreated: its files go up,
		// what the source holds below it and the tree lacks goes away.
		if err := m.putTree(ctx, mt, w, rel); err != nil {
			return err
		}
		return m.deleteUpstream(ctx, mt, mnt, w, rel, false)
	case !fi.Mode().IsRegular():
		return nil
	}
	return m.putFile(ctx, mt, w, rel)
}

// putTree puts every regular file below directory rel, except those
// pending on their own.
func (m *Manager) putTree(ctx context.Context, mt *mounted, w Writable, rel string) error {
	pending := m.wb.pendingSet(mt)
	return fs.WalkDir(m.cfg.FS.IOFS(ctx), mt.join(rel), func(p string, de fs.DirEntry, err error) error {
		if err != nil || !de.Type().IsRegular() {
			return err
		}
		if r := strings.TrimPrefix(p, mt.path+"/"); !pending[r] {
			return m.putFile(ctx, mt, w, r)
		}
		return nil
	})
}

// putFile puts regular file rel, with the version it was last seen at
// upstream as the precondition (none for a file new at this path).
func (m *Manager) putFile(ctx context.Context, mt *mounted, w Writable, rel string) error {
	unlock := m.lockPath(mt, rel)
	defer unlock()
	p := mt.join(rel)
	data, err := m.cfg.FS.ReadFile(ctx, p)
	if err != nil {
		return err
	}
	ver, err := m.version(ctx, p, rel)
	if err != nil {
		return err
	}
	newVer, err := w.Put(ctx, rel, data, ver)
	if err != nil {
		reason := "put-failed"
		if errors.Is(err, errdefs.ErrConflict) {
			reason = "upstream-changed"
		}
		m.conflict(Conflict{Root: mt.spec.Root, RelPath: rel, Reason: reason, Err: err})
		return fmt.Errorf("write back %s%s: %w", mt.spec.Root, "/"+rel, err)
	}
	err = m.cfg.FS.Populate(ctx, mt.path, []vfs.Item{{Path: rel, Keep: true, Xattrs: map[string][]byte{versionAttr: encodeVersion(rel, newVer)}}})
	if isNotExist(err) {
		return nil // removed meanwhile: its own write-back follows
	}
	return err
}

// lockPath serialises puts of one path (a directory's write-back and the
// file's own), so each reads the version the other recorded.
func (m *Manager) lockPath(mt *mounted, rel string) (unlock func()) {
	v, _ := m.pathLocks.LoadOrStore(mt.spec.Root+"\x00"+rel, new(sync.Mutex))
	mu := v.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}

// deleteUpstream deletes what the source lists below rel (and rel itself
// when self) that the tree does not hold as a regular file.
func (m *Manager) deleteUpstream(ctx context.Context, mt *mounted, mnt Mount, w Writable, rel string, self bool) error {
	var dels []string
	if self {
		dels = append(dels, rel)
	}
	if l, ok := mnt.(Lazy); ok {
		ents, err := l.List(ctx)
		if err != nil {
			return err
		}
		for _, e := range ents {
			if !strings.HasPrefix(e.Path, rel+"/") {
				continue
			}
			fi, err := m.cfg.FS.Lstat(ctx, mt.join(e.Path))
			if err == nil && fi.Mode().IsRegular() {
				continue
			}
			dels = append(dels, e.Path)
		}
	}
	if err := m.rescueStubs(ctx, mt, dels); err != nil {
		return err
	}
	for _, d := range dels {
		if err := w.Delete(ctx, d); err != nil && !errors.Is(err, fs.ErrNotExist) {
			m.conflict(Conflict{Root: mt.spec.Root, RelPath: d, Reason: "put-failed", Err: err})
			return fmt.Errorf("write back deletion of %s/%s: %w", mt.spec.Root, d, err)
		}
	}
	return nil
}

// rescueStubs hydrates the stubs below pending paths that still point at
// a source path about to be deleted (a directory of stubs renamed within
// the mount), so their bytes are not lost with it.
func (m *Manager) rescueStubs(ctx context.Context, mt *mounted, dels []string) error {
	gone := pathSet{}
	for _, d := range dels {
		gone[d] = true
	}
	for rel := range m.wb.pendingSet(mt) {
		err := fs.WalkDir(m.cfg.FS.IOFS(ctx), mt.join(rel), func(p string, de fs.DirEntry, err error) error {
			if isNotExist(err) {
				return nil
			}
			if err != nil || !de.Type().IsRegular() {
				return err
			}
			marker, err := m.cfg.FS.Getxattr(ctx, p, vfs.StubAttr)
			if isNotExist(err) {
				return nil
			}
			if err != nil {
				return err
			}
			if root, from, ok := parseMarker(marker); ok && root == mt.spec.Root && gone[from] {
				return m.Hydrate(ctx, p)
			}
			return nil
		})
		if err != nil {
			return err
		}
	}
	return nil
}

// conflict reports c to the hook.
func (m *Manager) conflict(c Conflict) Resolution {
	if m.cfg.OnConflict == nil {
		return Accept
	}
	return m.cfg.OnConflict(c)
}
