package sandbox

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path"
	"slices"
	"time"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/vfs"
)

// materializer writes one workspace state (a snapshot) into the work dir,
// touching only paths whose workspace identity differs from the manifest.
type materializer struct {
	ctx    context.Context
	snap   *vfs.FS
	host   *os.Root
	man    manifest
	ignore *matcher
	watch  *watcher // nil: none; directories new to the manifest get a watch
	stats  *Stats
	owner  int // the host uid entries get (0: left as created)
}

// sync makes the work dir mirror snap. With a previous state (the root
// the work dir mirrored) it visits only the paths Diff reports between the
// two plus extra (paths whose host copy may be unlike the workspace; true
// means the subtree too); without one, or when the diff fails (its nodes
// collected), it walks everything.
func (m *materializer) sync(prev *vfs.FS, extra map[string]bool) error {
	if prev == nil {
		return m.tree(".")
	}
	changes, err := vfs.Diff(m.ctx, prev, m.snap, vfs.DiffOptions{})
	if err != nil {
		clear(m.man)
		m.stats.Full = true
		return m.tree(".")
	}
	paths := maps.Clone(extra)
	if paths == nil {
		paths = map[string]bool{}
	}
	addChanges(paths, changes)
	for _, p := range slices.Sorted(maps.Keys(paths)) {
		var err error
		switch {
		case !m.inDir(p):
			err = m.remove(p)
		case paths[p]:
			err = m.tree(p)
		default:
			_, err = m.path(p)
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// addChanges adds the paths of changes to paths: a renamed entry's old
// path, and its new path with the subtree (a moved directory brings
// everything beneath it).
func addChanges(paths map[string]bool, changes []vfs.Change) {
	for _, c := range changes {
		if c.Op == vfs.Renamed {
			mark(paths, c.OldPath, false)
		}
		mark(paths, c.Path, c.Op == vfs.Renamed)
	}
}

// mark adds p to paths, recursive if asked or already so.
func mark(paths map[string]bool, p string, recursive bool) { paths[p] = paths[p] || recursive }

// tree syncs p and, for a directory, everything beneath it, removing host
// entries the workspace lacks.
func (m *materializer) tree(p string) error {
	fi, err := m.path(p)
	if err != nil || fi == nil || !fi.IsDir() {
		return err
	}
	ents, err := m.snap.ReadDir(m.ctx, p)
	if err != nil {
		return fmt.Errorf("materialize %s: %w", p, err)
	}
	names := make(map[string]bool, len(ents))
	for _, e := range ents {
		names[e.Name()] = true
		if err := m.tree(path.Join(p, e.Name())); err != nil {
			return err
		}
	}
	d, err := m.host.Open(p)
	if err != nil {
		return fmt.Errorf("materialize %s: %w", p, err)
	}
	hostEnts, err := d.ReadDir(-1)
	d.Close()
	if err != nil {
		return fmt.Errorf("materialize %s: %w", p, err)
	}
	for _, e := range hostEnts {
		q := path.Join(p, e.Name())
		if !names[e.Name()] && !m.ignore.self(q) {
			if err := m.remove(q); err != nil {
				return err
			}
		}
	}
	return nil
}

// path makes host path p mirror the workspace's p, not descending into a
// directory. It returns the workspace's FileInfo (nil when p is absent or
// ignored).
func (m *materializer) path(p string) (fs.FileInfo, error) {
	if m.ignore.match(p) {
		return nil, nil
	}
	fi, err := m.snap.Lstat(m.ctx, p)
	// A path resolved through a looping symbolic link is no entry of the
	// workspace: its parent is not a directory.
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errdefs.ErrNotDir) || errors.Is(err, errdefs.ErrLoop) {
		return nil, m.remove(p)
	}
	if err != nil {
		return nil, fmt.Errorf("materialize %s: %w", p, err)
	}
	old := m.man[p]
	if old != nil && old.sameWorkspace(fi) {
		return fi, nil
	}
	e := &entry{}
	switch kindOf(fi.Mode()) {
	case kindDir:
		err = m.dir(p, fi, old)
	case kindFile:
		err = m.file(p, fi, old, e)
	case kindSymlink:
		err = m.symlink(p, old, e)
	default:
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("materialize %s: %w", p, err)
	}
	hfi, err := ownAt(m.host, p, m.owner)
	if err != nil {
		return nil, fmt.Errorf("materialize %s: %w", p, err)
	}
	e.setHost(statOf(hfi), time.Now())
	e.setWorkspace(fi)
	m.man[p] = e
	return fi, nil
}

// inDir reports whether p's parent is a directory of the workspace and not
// a symbolic link that Lstat would follow to reach p (a directory the
// command removed may come back as a link, and its old children must not
// be mirrored through it). Only paths named by a diff need the check: tree
// reaches children through their directory.
func (m *materializer) inDir(p string) bool {
	dir := path.Dir(p)
	if dir == "." {
		return true
	}
	fi, err := m.snap.Lstat(m.ctx, dir)
	return err == nil && fi.IsDir()
}

// clearFor removes whatever the host has at p unless it is of kind k.
func (m *materializer) clearFor(p string, k kind) error {
	hfi, err := m.host.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if kindOf(hfi.Mode()) == k {
		return nil
	}
	return m.remove(p)
}

func (m *materializer) dir(p string, fi fs.FileInfo, old *entry) error {
	perm := hostPerm(fi.Mode())
	if old == nil || old.kind != kindDir {
		if err := m.clearFor(p, kindDir); err != nil {
			return err
		}
		err := m.host.Mkdir(p, perm)
		if err == nil {
			m.stats.Dirs++
		} else if !errors.Is(err, fs.ErrExist) {
			return err
		}
		if m.watch != nil {
			m.watch.add(p)
		}
		return m.host.Chmod(p, perm) // past the umask
	}
	if old.perm == perm {
		return nil
	}
	m.stats.Chmods++
	return m.host.Chmod(p, perm)
}

func (m *materializer) file(p string, fi fs.FileInfo, old, e *entry) error {
	data, err := m.snap.ReadFile(m.ctx, p)
	if err != nil {
		return err
	}
	e.hash = cas.Sum(data)
	perm, mtime := hostPerm(fi.Mode()), fi.ModTime()
	if old != nil && old.kind == kindFile && old.hash == e.hash {
		if old.perm != perm {
			m.stats.Chmods++
			if err := m.host.Chmod(p, perm); err != nil {
				return err
			}
		}
		if old.mtime != mtime.UnixNano() {
			return m.host.Chtimes(p, mtime, mtime)
		}
		return nil
	}
	if old == nil && m.reusable(p, kindFile, func(hfi fs.FileInfo) bool {
		return hfi.Size() == int64(len(data)) && hfi.ModTime().Equal(mtime) && hfi.Mode()&permBits == perm
	}) {
		return nil
	}
	if err := m.clearFor(p, kindFile); err != nil {
		return err
	}
	m.stats.Written++
	// A new inode, renamed into place: another host name hard-linked to the
	// old one keeps its bytes.
	tmp := path.Join(path.Dir(p), tempPrefix+randomName())
	f, err := m.host.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_TRUNC, perm)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	err = errors.Join(err, f.Chmod(perm), f.Close())
	if err == nil {
		err = m.host.Chtimes(tmp, mtime, mtime)
	}
	if err == nil {
		err = m.host.Rename(tmp, p)
	}
	if err != nil {
		return errors.Join(err, m.host.Remove(tmp))
	}
	return nil
}

func (m *materializer) symlink(p string, old, e *entry) error {
	target, err := m.snap.Readlink(m.ctx, p)
	if err != nil {
		return err
	}
	e.target = target
	if old != nil && old.kind == kindSymlink && old.target == target {
		return nil
	}
	if old == nil && m.reusable(p, kindSymlink, func(fs.FileInfo) bool {
		got, err := m.host.Readlink(p)
		return err == nil && got == target
	}) {
		return nil
	}
	if err := m.host.RemoveAll(p); err != nil {
		return err
	}
	m.stats.Links++
	return m.host.Symlink(target, p)
}

// reusable reports whether a full sync may keep the host's existing entry
// at p for a workspace entry the manifest does not know: a work dir kept
// from an earlier process mirrors some earlier state of the workspace, and
// an entry of kind k that same reports as equal (for a file: size, mtime
// and permission bits, the quick check of rsync) is kept instead of being
// rewritten.
func (m *materializer) reusable(p string, k kind, same func(fs.FileInfo) bool) bool {
	if !m.stats.Full {
		return false
	}
	hfi, err := m.host.Lstat(p)
	if err != nil || kindOf(hfi.Mode()) != k || !same(hfi) {
		return false
	}
	m.stats.Reused++
	return true
}

// remove deletes p (and its subtree) on the host and from the manifest.
func (m *materializer) remove(p string) error {
	if _, ok := m.man[p]; !ok {
		if _, err := m.host.Lstat(p); err != nil {
			return nil // absent, or beneath something that is not a directory
		}
	}
	m.man.drop(p)
	if p == "." {
		return fmt.Errorf("materialize: %w: the workspace root is not a directory", fs.ErrInvalid)
	}
	if !underDirs(m.host, p, nil) {
		// A parent was replaced (by a link, a file): p went with it, and
		// what the host path reaches now through a link is not p.
		return nil
	}
	m.stats.Removed++
	if err := m.host.RemoveAll(p); err != nil {
		return fmt.Errorf("materialize %s: remove: %w", p, err)
	}
	return nil
}

// tempPrefix names files being written (never while a command runs; a
// leftover from a crash is removed by the next full sync).
const tempPrefix = ".forkspace-tmp-"

func randomName() string {
	var b [8]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
