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
	priors  map[string]map[string]prior        // root → rel: seen by CheckWrite, not yet marked
	closed  bool
	timers  sync.WaitGroup // write-backs started by timers

	persistMu sync.Mutex // orders persisted snapshots
}

// pendingPath is one path waiting for write-back; gen counts its marks, so
// a flush that raced with a new write keeps it pending.
type pendingPath struct {
	gen   uint64
	timer *time.Timer
	saved savedPath
}

// savedPath is what is persisted of a pending path.
type savedPath struct {
	// Prior is the path's state before its first change not yet written
	// back: what the source should still hold there.
	Prior prior `json:"prior"`
	// Conflict is set when the last write-back hit an upstream change
	// (errdefs.ErrConflict); the path stays pending until Resolve.
	Conflict bool `json:"conflict,omitempty"`
}

// prior is a path's state in the tree before a change. Known is false when
// no CheckWrite saw the path first (the old name of a rename).
type prior struct {
	Known bool `json:"known,omitempty"`
	Dir   bool `json:"dir,omitempty"`
	// Version is the upstream version of the file that was there ("" for
	// none, or a file that never reached the source).
	Version string `json:"version,omitempty"`
}

// pendingKey is the setting that holds a workspace's pending write-back.
func pendingKey(workspaceID string) string { return "mount.pending." + workspaceID }

func (wb *writeBack) init(m *Manager) {
	wb.m = m
	wb.pending = map[string]map[string]*pendingPath{}
	wb.priors = map[string]map[string]prior{}
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
	saved, err := decodePending(raw)
	if err != nil {
		return fmt.Errorf("load pending write-back: %w: %w", errdefs.ErrCorrupt, err)
	}
	for root, paths := range saved {
		rows, err := wb.m.byRoot(root)
		if err != nil {
			continue // the mount left the table: nothing to write to
		}
		for rel, sp := range paths {
			wb.schedule(rows[0], rel, &sp)
		}
	}
	return nil
}

// decodePending reads a persisted pending set: root → rel → savedPath, or
// the earlier root → [rel] (priors unknown).
func decodePending(raw string) (map[string]map[string]savedPath, error) {
	var saved map[string]map[string]savedPath
	if err := json.Unmarshal([]byte(raw), &saved); err == nil {
		return saved, nil
	}
	var legacy map[string][]string
	if err := json.Unmarshal([]byte(raw), &legacy); err != nil {
		return nil, err
	}
	saved = map[string]map[string]savedPath{}
	for root, rels := range legacy {
		saved[root] = map[string]savedPath{}
		for _, rel := range rels {
			saved[root][rel] = savedPath{}
		}
	}
	return saved, nil
}

// see records rel's state before a change CheckWrite is about to allow,
// unless rel is already pending (its prior is older).
func (wb *writeBack) see(ctx context.Context, mt *mounted, rel string) {
	root := mt.spec.Root
	wb.mu.Lock()
	_, pending := wb.pending[root][rel]
	wb.mu.Unlock()
	if pending {
		return
	}
	pr := prior{Known: true}
	p := mt.join(rel)
	fi, err := wb.m.cfg.FS.Lstat(ctx, p)
	switch {
	case err == nil && fi.IsDir():
		pr.Dir = true
	case err == nil && fi.Mode().IsRegular():
		if pr.Version, err = wb.m.version(ctx, p, rel); err != nil {
			pr = prior{}
		}
	case err != nil && !isNotExist(err):
		pr = prior{}
	}
	wb.mu.Lock()
	defer wb.mu.Unlock()
	if wb.priors[root] == nil {
		wb.priors[root] = map[string]prior{}
	}
	wb.priors[root][rel] = pr
}

// mark records a mutation of rel under mt and persists the set when rel
// is new to it.
func (wb *writeBack) mark(mt *mounted, rel string) {
	if wb.schedule(mt, rel, nil) {
		if err := wb.persist(context.Background()); err != nil {
			wb.m.log.Warn("persist pending write-back", "root", mt.spec.Root, "path", rel, "err", err)
		}
	}
}

// schedule adds rel to the pending set (restarting its debounce timer)
// and reports whether it was new. A new path takes saved (a restart) or
// the prior CheckWrite saw.
func (wb *writeBack) schedule(mt *mounted, rel string, saved *savedPath) bool {
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
		if saved != nil {
			p.saved = *saved
		} else {
			p.saved.Prior = wb.priors[root][rel]
		}
		delete(wb.priors[root], rel)
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
	saved := map[string]map[string]savedPath{}
	for root, paths := range wb.pending {
		for rel, p := range paths {
			if saved[root] == nil {
				saved[root] = map[string]savedPath{}
			}
			saved[root][rel] = p.saved
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

// take returns rel's generation and saved state, stopping its timer, or
// false if rel is not pending.
func (wb *writeBack) take(root, rel string) (uint64, savedPath, bool) {
	wb.mu.Lock()
	defer wb.mu.Unlock()
	p, ok := wb.pending[root][rel]
	if !ok {
		return 0, savedPath{}, false
	}
	if p.timer != nil && p.timer.Stop() {
		wb.timers.Done() // the stopped timer's callback will not run
	}
	p.timer = nil
	return p.gen, p.saved, true
}

// adopt gives pending rel the upstream version it replaces when its prior
// knew none (a file written again below a removed directory).
func (wb *writeBack) adopt(root, rel, version string) {
	wb.mu.Lock()
	defer wb.mu.Unlock()
	if p, ok := wb.pending[root][rel]; ok && p.saved.Prior.Version == "" && !p.saved.Prior.Dir {
		p.saved.Prior.Version = version
	}
}

// conflicted records that rel's write-back hit an upstream change: it
// stays pending, marked, and the set is persisted.
func (wb *writeBack) conflicted(ctx context.Context, root, rel string) error {
	wb.mu.Lock()
	p, ok := wb.pending[root][rel]
	if ok {
		p.saved.Conflict = true
	}
	wb.mu.Unlock()
	if !ok {
		return nil
	}
	return wb.persist(ctx)
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

// conflicts returns the pending paths of root marked conflicted, sorted.
func (wb *writeBack) conflicts(root string) []string {
	wb.mu.Lock()
	defer wb.mu.Unlock()
	var out []string
	for rel, p := range wb.pending[root] {
		if p.saved.Conflict {
			out = append(out, rel)
		}
	}
	slices.Sort(out)
	return out
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

// Conflicts returns the pending paths under root whose last write-back
// hit an upstream change (nil for a root that is not mounted). They stay
// pending, and Refresh keeps their local state, until Resolve.
func (m *Manager) Conflicts(root string) []string {
	rows, err := m.byRoot(root)
	if err != nil || root == "" {
		return nil
	}
	return m.wb.conflicts(rows[0].spec.Root)
}

// Resolve settles a conflicted (or any pending) path rel under root:
// KeepLocal writes the workspace's state to the source without a
// precondition (a force-push), TakeUpstream drops the local change and
// brings the source's state in (a refresh of the mount). A path not
// pending is fs.ErrNotExist.
func (m *Manager) Resolve(ctx context.Context, root, rel string, r Resolution) error {
	rows, err := m.byRoot(root)
	if err != nil {
		return err
	}
	mt := rows[0]
	rel, err = vfs.CleanPath(rel)
	if err != nil {
		return err
	}
	return m.flights.do("flush\x00"+mt.spec.Root+"\x00"+rel, func() error {
		gen, saved, ok := m.wb.take(mt.spec.Root, rel)
		if !ok {
			return fmt.Errorf("resolve %s/%s: %w: not pending", mt.spec.Root, rel, fs.ErrNotExist)
		}
		switch r {
		case KeepLocal:
			saved.Prior.Version = Unconditional
			if err := m.writeBackPath(ctx, mt, rel, saved.Prior, true); err != nil {
				return err
			}
			return m.wb.done(ctx, mt.spec.Root, rel, gen)
		case TakeUpstream:
			if err := m.wb.done(ctx, mt.spec.Root, rel, gen); err != nil {
				return err
			}
			// Stubs again what the source holds at rel; what it lacks goes.
			return errors.Join(m.dropLocal(ctx, mt, rel), m.index(ctx, mt, true))
		}
		return fmt.Errorf("resolve %s/%s: %w: resolution %q", mt.spec.Root, rel, fs.ErrInvalid, r)
	})
}

// dropLocal removes rel's version record, so a refresh replaces what the
// tree holds there with the source's state.
func (m *Manager) dropLocal(ctx context.Context, mt *mounted, rel string) error {
	return fs.WalkDir(m.cfg.FS.IOFS(ctx), mt.join(rel), func(p string, de fs.DirEntry, err error) error {
		if isNotExist(err) {
			return nil
		}
		if err != nil || de.IsDir() {
			return err
		}
		r := strings.TrimPrefix(p, mt.path+"/")
		return m.cfg.FS.Populate(ctx, mt.path, []vfs.Item{{Path: r, Remove: true}})
	})
}

// Flush writes the pending changes under root (every read-write mount for
// "") to their sources now, Concurrency at a time, and returns their
// errors joined. A change that conflicts with the source (errdefs.
// ErrConflict) is reported to the conflict hook and stays pending, marked
// (Conflicts, Resolve); a failed put is reported and stays pending.
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

// Settle writes back now what the debounce timers would write later: the
// pending paths of debounced mounts that are not in conflict. A process
// about to exit calls it (Close leaves them pending for the next
// Attach); manual mounts wait for Flush.
func (m *Manager) Settle(ctx context.Context) error {
	var errs []error
	for _, mt := range m.mounts {
		if mt.spec.Options.WriteBack != Debounce || mt.spec.Options.Mode != ReadWrite {
			continue
		}
		conflicted := m.wb.conflicts(mt.spec.Root)
		var rels []string
		for _, rel := range m.wb.list(mt.spec.Root) {
			if !slices.Contains(conflicted, rel) {
				rels = append(rels, rel)
			}
		}
		errs = append(errs, m.parallel(rels, func(rel string) error { return m.flushPath(ctx, mt, rel) }))
	}
	return errors.Join(errs...)
}

// flushPath writes rel's final state to mt's source (writeBackPath),
// after its pending parents': a file that became a directory is deleted
// before anything is put below it, and a file under a removed directory
// learns the version it replaces (adopt).
func (m *Manager) flushPath(ctx context.Context, mt *mounted, rel string) error {
	for dir := path.Dir(rel); dir != "."; dir = path.Dir(dir) {
		if slices.Contains(m.wb.list(mt.spec.Root), dir) {
			if err := m.flushPath(ctx, mt, dir); err != nil {
				return err
			}
		}
	}
	return m.flights.do("flush\x00"+mt.spec.Root+"\x00"+rel, func() error {
		gen, saved, ok := m.wb.take(mt.spec.Root, rel)
		if !ok {
			return nil
		}
		err := m.writeBackPath(ctx, mt, rel, saved.Prior, false)
		switch {
		case errors.Is(err, errdefs.ErrConflict):
			return errors.Join(err, m.wb.conflicted(ctx, mt.spec.Root, rel))
		case err != nil:
			return err // stays pending
		}
		return m.wb.done(ctx, mt.spec.Root, rel, gen)
	})
}

// writeBackPath writes rel's final state to the source, in an order the
// source accepts (S3 refuses a key below an object, and an object where
// keys lie below):
//
//   - pending parents go first (flushPath), so a file that became a
//     directory is deleted before anything is put below it;
//   - a path that is gone or a directory now deletes the object it was
//     (with its last version as the precondition), and what the source
//     holds below it that the tree lacks when it was or is a directory;
//   - a regular file that was a directory deletes what lay below, then is
//     Put (with its last known version as the precondition, or none
//     existing for a new file).
//
// Symbolic links stay local. force writes without preconditions.
func (m *Manager) writeBackPath(ctx context.Context, mt *mounted, rel string, pr prior, force bool) error {
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
	wasDir := pr.Dir || !pr.Known
	switch {
	case isNotExist(err):
		return m.deleteUpstream(ctx, mt, mnt, w, rel, pr, wasDir)
	case err != nil:
		return err
	case fi.IsDir():
		// A directory renamed into place or recreated: its files go up,
		// what the source holds below it and the tree lacks goes away.
		if err := m.deleteUpstream(ctx, mt, mnt, w, rel, pr, false); err != nil {
			return err
		}
		if err := m.putTree(ctx, mt, w, rel, force); err != nil {
			return err
		}
		return m.deleteUpstream(ctx, mt, mnt, w, rel, prior{Known: true}, true)
	case !fi.Mode().IsRegular():
		return nil
	}
	if wasDir {
		if err := m.deleteUpstream(ctx, mt, mnt, w, rel, prior{Known: true}, true); err != nil {
			return err
		}
	}
	return m.putFile(ctx, mt, w, rel, pr, force)
}

// Unconditional, as the ifVersion of Put or Delete, writes whatever the
// source holds (a force-push).
const Unconditional = "*"

// putTree puts every regular file below directory rel, except those
// pending on their own.
func (m *Manager) putTree(ctx context.Context, mt *mounted, w Writable, rel string, force bool) error {
	pending := m.wb.pendingSet(mt)
	return fs.WalkDir(m.cfg.FS.IOFS(ctx), mt.join(rel), func(p string, de fs.DirEntry, err error) error {
		if err != nil || !de.Type().IsRegular() {
			return err
		}
		if r := strings.TrimPrefix(p, mt.path+"/"); !pending[r] {
			return m.putFile(ctx, mt, w, r, prior{}, force)
		}
		return nil
	})
}

// putFile puts regular file rel with a precondition: the version the file
// was last seen at upstream (its own record, else the prior one of a file
// replaced at rel), or, for a file new at rel, that nothing exists there.
func (m *Manager) putFile(ctx context.Context, mt *mounted, w Writable, rel string, pr prior, force bool) error {
	unlock := m.lockPath(mt, rel)
	defer unlock()
	p := mt.join(rel)
	data, err := m.cfg.FS.ReadFile(ctx, p)
	if err != nil {
		return err
	}
	ver, err := m.version(ctx, p, rel)
	switch {
	case err != nil:
		return err
	case force:
		ver = Unconditional
	case ver == "" && !pr.Dir:
		ver = pr.Version
	}
	newVer, err := w.Put(ctx, rel, data, ver)
	if err != nil {
		m.conflict(Conflict{Root: mt.spec.Root, RelPath: rel, Reason: failReason(err), Err: err})
		return fmt.Errorf("write back %s%s: %w", mt.spec.Root, "/"+rel, err)
	}
	err = m.cfg.FS.Populate(ctx, mt.path, []vfs.Item{{Path: rel, Keep: true, Xattrs: map[string][]byte{versionAttr: encodeVersion(rel, newVer)}}})
	if isNotExist(err) {
		return nil // removed meanwhile: its own write-back follows
	}
	return err
}

// failReason is a Conflict's reason for a failed put or delete.
func failReason(err error) string {
	if errors.Is(err, errdefs.ErrConflict) {
		return "upstream-changed"
	}
	return "put-failed"
}

// lockPath serialises puts of one path (a directory's write-back and the
// file's own), so each reads the version the other recorded.
func (m *Manager) lockPath(mt *mounted, rel string) (unlock func()) {
	v, _ := m.pathLocks.LoadOrStore(mt.spec.Root+"\x00"+rel, new(sync.Mutex))
	mu := v.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}

// deleteUpstream deletes the object at rel when pr says the source has one
// (with pr.Version as the precondition; an unknown prior deletes
// unconditionally), and, when below, what the source
// lists below rel that the tree does not hold as a regular file (each with
// its listed version as the precondition). It lists only below rel.
func (m *Manager) deleteUpstream(ctx context.Context, mt *mounted, mnt Mount, w Writable, rel string, pr prior, below bool) error {
	type del struct{ rel, ifVersion string }
	var dels []del
	if !pr.Known || pr.Version != "" {
		dels = append(dels, del{rel, pr.Version})
	}
	if below {
		ents, err := listBelow(ctx, mnt, rel)
		if err != nil {
			return err
		}
		for _, e := range ents {
			fi, err := m.cfg.FS.Lstat(ctx, mt.join(e.Path))
			if err == nil && fi.Mode().IsRegular() {
				m.wb.adopt(mt.spec.Root, e.Path, e.Version)
				continue
			}
			dels = append(dels, del{e.Path, e.Version})
		}
	}
	gone := make([]string, len(dels))
	for i, d := range dels {
		gone[i] = d.rel
	}
	if err := m.rescueStubs(ctx, mt, gone); err != nil {
		return err
	}
	for _, d := range dels {
		if d.ifVersion == "" || pr.Version == Unconditional {
			d.ifVersion = Unconditional
		}
		if err := w.Delete(ctx, d.rel, d.ifVersion); err != nil && !errors.Is(err, fs.ErrNotExist) {
			m.conflict(Conflict{Root: mt.spec.Root, RelPath: d.rel, Reason: failReason(err), Err: err})
			return fmt.Errorf("write back deletion of %s/%s: %w", mt.spec.Root, d.rel, err)
		}
	}
	return nil
}

// listBelow lists what a lazy source holds below rel: with one scoped
// listing when the mount is a PrefixLister, else from its full listing.
func listBelow(ctx context.Context, mnt Mount, rel string) ([]Entry, error) {
	if pl, ok := mnt.(PrefixLister); ok {
		return pl.ListPrefix(ctx, rel)
	}
	l, ok := mnt.(Lazy)
	if !ok {
		return nil, nil
	}
	ents, err := l.List(ctx)
	if err != nil {
		return nil, err
	}
	var out []Entry
	for _, e := range ents {
		if strings.HasPrefix(e.Path, rel+"/") {
			out = append(out, e)
		}
	}
	return out, nil
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
