package mount

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"strings"
	"sync"
	"time"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/vfs"
)

// indexAll indexes every mount in parallel; refresh re-lists lazy mounts
// that are already indexed too.
func (m *Manager) indexAll(ctx context.Context, refresh bool) error {
	return m.each(m.mounts, func(mt *mounted) error { return m.indexRow(ctx, mt, refresh) })
}

// indexRow runs index and keeps mt's failure state: the error operations
// under the root report, and the persisted failure record that spaces out
// retries (failures.go).
func (m *Manager) indexRow(ctx context.Context, mt *mounted, refresh bool) error {
	err := m.index(ctx, mt, refresh)
	mt.mu.Lock()
	if err == nil {
		mt.failed = nil
	} else if _, indexed, serr := m.state(ctx, mt); serr == nil && !indexed {
		mt.failed = err // nothing came in: say why
	}
	failed := mt.failed
	mt.mu.Unlock()
	if rerr := m.recordFailure(ctx, mt, failed); rerr != nil {
		m.log.Warn("record index failure", "root", mt.spec.Root, "err", rerr)
	}
	return err
}

// firstIndex is a mount's index on first use: unless retry (an explicit
// Index or Refresh), skipped with the recorded cause while a recent
// failure's backoff lasts.
func (m *Manager) firstIndex(ctx context.Context, mt *mounted, retry bool) error {
	if err := m.backingOff(ctx, mt); err != nil && !retry {
		mt.mu.Lock()
		mt.failed = err
		mt.mu.Unlock()
		return err
	}
	return m.indexRow(ctx, mt, false)
}

// each runs fn for every row in parallel and joins the errors.
func (m *Manager) each(rows []*mounted, fn func(*mounted) error) error {
	errs := make([]error, len(rows))
	var wg sync.WaitGroup
	for i, mt := range rows {
		wg.Go(func() { errs[i] = fn(mt) })
	}
	wg.Wait()
	return errors.Join(errs...)
}

// state reads mt's rootAttr; ok is false when mt was never indexed in
// this tree.
func (m *Manager) state(ctx context.Context, mt *mounted) (rootState, bool, error) {
	b, err := m.cfg.FS.Getxattr(ctx, mt.path, rootAttr)
	if isNotExist(err) {
		return rootState{}, false, nil
	}
	if err != nil {
		return rootState{}, false, err
	}
	var st rootState
	if err := json.Unmarshal(b, &st); err != nil {
		return rootState{}, false, fmt.Errorf("%w: mount state of %s: %w", errdefs.ErrCorrupt, mt.spec.Root, err)
	}
	return st, true, nil
}

// index brings mt in unless the tree already holds its index (a reopen, a
// fork); refresh re-lists an indexed lazy mount. It builds the mount
// (calling a factory once) in any case, and decides whether this
// workspace owns the write-back of a read-write mount.
func (m *Manager) index(ctx context.Context, mt *mounted, refresh bool) (err error) {
	mnt, strategy, err := m.build(ctx, mt)
	if err != nil {
		return rootErr("index", mt, err)
	}
	st, indexed, err := m.state(ctx, mt)
	if err != nil {
		return rootErr("index", mt, err)
	}
	switch {
	case strategy == StrategyVirtual:
		// The root is a real, empty directory so the parent lists it.
		return rootErr("index", mt, m.cfg.FS.Populate(ctx, mt.path, nil))
	case indexed && !refresh:
		return nil
	case indexed && strategy == StrategyLazy:
		return rootErr("refresh", mt, m.refresh(ctx, mt, mnt.(Lazy), st))
	case indexed:
		return rootErr("refresh", mt, m.rematerialize(ctx, mt, mnt.(Eager), st))
	}
	defer func() {
		if err == nil {
			mt.mu.Lock()
			mt.brought = true
			mt.mu.Unlock()
		}
	}()
	var (
		items          []vfs.Item
		entries, bytes int64
	)
	switch strategy {
	case StrategyLazy:
		items, entries, bytes, err = m.listItems(ctx, mt, mnt.(Lazy))
	case StrategyEager:
		items, entries, bytes, err = m.materialize(ctx, mt, mnt.(Eager))
	}
	if err != nil {
		return rootErr("index", mt, err)
	}
	err = rootErr("index", mt, m.commitIndex(ctx, mt, mnt, strategy, items, entries, bytes))
	return err
}

// local reports whether mt's write-back stays in this workspace: its tree
// holds an index another workspace made (a fork's copy of a read-write
// mount) and the mount has no ForkWriteBack. It reads the index record
// itself, so the answer holds before (and without) this Manager's index.
func (m *Manager) local(ctx context.Context, mt *mounted) (bool, error) {
	if mt.spec.Options.ForkWriteBack {
		return false, nil
	}
	st, indexed, err := m.state(ctx, mt)
	return indexed && st.Owner != m.cfg.Context.WorkspaceID, err
}

// commitIndex writes items and the root state in one mutation. The owner
// of an index stays the workspace that first made it (a fork's refresh
// does not take the write-back over).
func (m *Manager) commitIndex(ctx context.Context, mt *mounted, mnt Mount, strategy Strategy, items []vfs.Item, entries, bytes int64) error {
	owner := m.cfg.Context.WorkspaceID
	if old, indexed, err := m.state(ctx, mt); err != nil {
		return err
	} else if indexed {
		owner = old.Owner
	}
	st := rootState{Kind: mnt.Kind(), Source: mt.spec.Source, Owner: owner, Indexed: time.Now().UTC(), Strategy: strategy, Entries: entries, Bytes: bytes}
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	items = append(items, vfs.Item{Path: ".", Keep: true, Xattrs: map[string][]byte{rootAttr: b}})
	return m.cfg.FS.Populate(ctx, mt.path, items)
}

// ignored reports whether rel has a segment in mt's ignore list.
func (mt *mounted) ignored(rel string) bool {
	for seg := range strings.SplitSeq(rel, "/") {
		for _, ig := range mt.spec.Options.Ignore {
			if seg == ig {
				return true
			}
		}
	}
	return false
}

// checkCaps enforces MaxEntries and MaxBytes on what an index brings in.
func (mt *mounted) checkCaps(entries, bytes int64) error {
	o := mt.spec.Options
	switch {
	case o.MaxEntries > 0 && entries > o.MaxEntries:
		return fmt.Errorf("%w: %d entries over the mount's cap of %d", errdefs.ErrQuota, entries, o.MaxEntries)
	case o.MaxBytes > 0 && bytes > o.MaxBytes:
		return fmt.Errorf("%w: %d bytes over the mount's cap of %d", errdefs.ErrQuota, bytes, o.MaxBytes)
	}
	return nil
}

// listItems lists a lazy mount and returns its stubs (symbolic links and
// empty files are written whole).
func (m *Manager) listItems(ctx context.Context, mt *mounted, l Lazy) (items []vfs.Item, entries, bytes int64, err error) {
	ents, err := listCapped(ctx, mt, l)
	if err != nil {
		return nil, 0, 0, err
	}
	for _, e := range ents {
		if !fs.ValidPath(e.Path) || e.Path == "." {
			return nil, 0, 0, fmt.Errorf("%w: listed path %q", fs.ErrInvalid, e.Path)
		}
		if mt.ignored(e.Path) {
			continue
		}
		entries++
		bytes += e.Size
		items = append(items, stubItem(mt, e))
	}
	if err := mt.checkCaps(entries, bytes); err != nil {
		return nil, 0, 0, err
	}
	return items, entries, bytes, nil
}

// listCapped lists l; a PageLister stops as soon as the entries listed
// so far (ignored ones left out) pass mt's caps.
func listCapped(ctx context.Context, mt *mounted, l Lazy) ([]Entry, error) {
	o := mt.spec.Options
	pl, ok := l.(PageLister)
	if !ok || o.MaxEntries <= 0 && o.MaxBytes <= 0 {
		return l.List(ctx)
	}
	var entries, bytes int64
	return pl.ListPages(ctx, func(page []Entry) error {
		for _, e := range page {
			if !mt.ignored(e.Path) {
				entries++
				bytes += e.Size
			}
		}
		return mt.checkCaps(entries, bytes)
	})
}

// stubItem is the item of one listed entry.
func stubItem(mt *mounted, e Entry) vfs.Item {
	it := vfs.Item{Path: e.Path, Mode: e.Mode, ModTime: e.ModTime, Xattrs: map[string][]byte{versionAttr: encodeVersion(e.Path, e.Version)}}
	switch {
	case e.Mode&fs.ModeSymlink != 0:
		it.Target = e.Target
	case e.Size > 0:
		it.Stub, it.Size = true, e.Size
		it.Xattrs[vfs.StubAttr] = stubMarker(mt.spec.Root, e.Path)
	default:
		it.DropXattrs = []string{vfs.StubAttr}
	}
	if it.Mode.Perm() == 0 && e.Mode&fs.ModeSymlink == 0 {
		it.Mode |= 0o644
	}
	return it
}

// encodeVersion is a versionAttr value: the upstream version of the file
// at rel. A file moved elsewhere in the mount keeps the old path, so its
// version is not taken for the new path's.
func encodeVersion(rel, version string) []byte { return []byte(rel + "\x00" + version) }

// version returns the upstream version of FS path p at mount path rel, or
// "" when the file never came from (or went to) the source at rel.
func (m *Manager) version(ctx context.Context, p, rel string) (string, error) {
	b, err := m.cfg.FS.Getxattr(ctx, p, versionAttr)
	if isNotExist(err) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	at, v, ok := strings.Cut(string(b), "\x00")
	if !ok || at != rel {
		return "", nil
	}
	return v, nil
}

// stubMarker is a stub's StubAttr value: the mount root and the path below
// it, so a stub renamed elsewhere still hydrates from its source.
func stubMarker(root, rel string) []byte { return []byte(root + "\x00" + rel) }

func parseMarker(b []byte) (root, rel string, ok bool) {
	return strings.Cut(string(b), "\x00")
}

// collector is the WriteAPI an eager mount writes through: it buffers the
// tree so caps are checked before anything lands.
type collector struct {
	mt             *mounted
	mu             sync.Mutex
	items          []vfs.Item
	entries, bytes int64
}

var _ WriteAPI = (*collector)(nil)

func (c *collector) add(rel string, it vfs.Item) error {
	if !fs.ValidPath(rel) || rel == "." {
		return &fs.PathError{Op: "materialize", Path: rel, Err: fs.ErrInvalid}
	}
	if c.mt.ignored(rel) {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.entries++
	c.bytes += int64(len(it.Data))
	if err := c.mt.checkCaps(c.entries, c.bytes); err != nil {
		return err
	}
	it.Path = rel
	c.items = append(c.items, it)
	return nil
}

func (c *collector) WriteFile(rel string, data []byte, mode fs.FileMode) error {
	return c.add(rel, vfs.Item{Mode: mode.Perm(), Data: append([]byte(nil), data...)})
}

func (c *collector) Mkdir(rel string, mode fs.FileMode) error {
	return c.add(rel, vfs.Item{Mode: fs.ModeDir | mode.Perm()})
}

func (c *collector) Symlink(target, rel string) error {
	return c.add(rel, vfs.Item{Mode: fs.ModeSymlink | 0o777, Target: target})
}

// materialize runs an eager mount into a collector.
func (m *Manager) materialize(ctx context.Context, mt *mounted, e Eager) (items []vfs.Item, entries, bytes int64, err error) {
	c := &collector{mt: mt}
	if err := e.Materialize(ctx, c); err != nil {
		return nil, 0, 0, err
	}
	return c.items, c.entries, c.bytes, nil
}

// rematerialize replaces an eager mount's subtree with a fresh
// materialization (Refresh): the old entries go, in the same mutation.
func (m *Manager) rematerialize(ctx context.Context, mt *mounted, e Eager, _ rootState) error {
	items, entries, bytes, err := m.materialize(ctx, mt, e)
	if err != nil {
		return err
	}
	ents, err := m.cfg.FS.ReadDir(ctx, mt.path)
	if err != nil {
		return err
	}
	removes := make([]vfs.Item, 0, len(ents))
	for _, de := range ents {
		removes = append(removes, vfs.Item{Path: de.Name(), Remove: true})
	}
	return m.commitIndex(ctx, mt, mt.m, StrategyEager, append(removes, items...), entries, bytes)
}

// localFile is a file of a lazy mount's subtree as the tree holds it.
type localFile struct {
	version string
	stub    bool
}

// walkLocal returns the files under mt that came from the source (those
// carrying a version), by path relative to the root.
func (m *Manager) walkLocal(ctx context.Context, mt *mounted) (map[string]localFile, error) {
	out := map[string]localFile{}
	err := fs.WalkDir(m.cfg.FS.IOFS(ctx), mt.path, func(p string, de fs.DirEntry, err error) error {
		if err != nil || de.IsDir() {
			return err
		}
		rel := strings.TrimPrefix(p, mt.path+"/")
		v, err := m.version(ctx, p, rel)
		if err != nil || v == "" || de.Type()&fs.ModeSymlink != 0 {
			return err
		}
		_, serr := m.cfg.FS.Getxattr(ctx, p, vfs.StubAttr)
		out[rel] = localFile{version: v, stub: serr == nil}
		return nil
	})
	return out, err
}

// refresh re-lists a lazy mount and applies upstream changes: new entries
// become stubs, entries whose version changed become stubs again (their
// hydrated bytes are dropped), entries gone upstream are removed. A path
// with pending write-back keeps its local state; an upstream change there
// is reported as an "upstream-changed" conflict.
func (m *Manager) refresh(ctx context.Context, mt *mounted, l Lazy, _ rootState) error {
	ents, err := listCapped(ctx, mt, l)
	if err != nil {
		return err
	}
	local, err := m.walkLocal(ctx, mt)
	if err != nil {
		return err
	}
	pending := m.wb.pendingSet(mt)
	var (
		items          []vfs.Item
		entries, bytes int64
	)
	seen := map[string]bool{}
	for _, e := range ents {
		if !fs.ValidPath(e.Path) || e.Path == "." || mt.ignored(e.Path) {
			continue
		}
		seen[e.Path] = true
		entries++
		bytes += e.Size
		lf, have := local[e.Path]
		switch {
		case have && lf.version == e.Version:
			continue
		case pending.covers(e.Path):
			if have {
				m.conflict(Conflict{Root: mt.spec.Root, RelPath: e.Path, Reason: "upstream-changed", Err: errdefs.ErrConflict})
			}
			continue
		}
		items = append(items, stubItem(mt, e))
	}
	if err := mt.checkCaps(entries, bytes); err != nil {
		return err
	}
	for p := range local {
		if !seen[p] && !pending.covers(p) {
			items = append(items, vfs.Item{Path: p, Remove: true})
		}
	}
	return m.commitIndex(ctx, mt, mt.m, StrategyLazy, items, entries, bytes)
}

// Refresh re-lists root's lazy mount (or re-materializes its eager mount)
// and applies upstream changes; root "" refreshes every mount. Virtual
// mounts are live and need none. A mount this call's first index just
// brought in is not listed twice. Errors leave the tree as it was.
func (m *Manager) Refresh(ctx context.Context, root string) error {
	rows, err := m.byRoot(root)
	if err != nil {
		return err
	}
	ran, _ := m.awaitIndex(true)
	return m.each(rows, func(mt *mounted) error {
		mt.mu.Lock()
		fresh := ran && mt.brought
		mt.mu.Unlock()
		if fresh {
			return nil
		}
		return m.indexRow(ctx, mt, true)
	})
}
