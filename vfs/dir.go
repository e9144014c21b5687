package vfs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sort"
	"strings"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/kv"
)

// Mkdir creates directory name with permission bits perm. An existing
// entry (even a dangling symbolic link) is fs.ErrExist; a missing parent is
// fs.ErrNotExist.
func (f *FS) Mkdir(ctx context.Context, name string, perm fs.FileMode) error {
	const op = "mkdir"
	if err := validPath(op, name); err != nil {
		return err
	}
	return f.update(ctx, op, name, func(t *txn) error {
		n, err := t.resolve(ctx, name, false)
		if err != nil {
			return err
		}
		if n.exists() {
			return fs.ErrExist
		}
		_, _, err = t.create(ctx, n.parent, n.name, typeDir, UnixMode(perm))
		return err
	})
}

// MkdirAll creates directory name and any missing parents, all in one
// atomic mutation. An existing directory (or a link to one) is fine, and
// changes nothing — so it is fine too where nothing may be changed: a
// mount root, a read-only mount or checkpoint; an existing non-directory
// is errdefs.ErrNotDir, a dangling link fs.ErrExist.
func (f *FS) MkdirAll(ctx context.Context, name string, perm fs.FileMode) error {
	const op = "mkdir"
	if err := validPath(op, name); err != nil {
		return err
	}
	if fi, err := f.Stat(ctx, name); err == nil && fi.IsDir() {
		return nil
	}
	return f.update(ctx, op, name, func(t *txn) error {
		comps := splitPath(name)
		for i := range comps {
			p := strings.Join(comps[:i+1], "/")
			n, err := t.resolve(ctx, p, false)
			if err == nil && n.typ == typeSymlink {
				// A link to a directory is fine; a dangling one is not
				// created through.
				if n, err = t.resolve(ctx, p, true); err == nil && !n.exists() {
					return fs.ErrExist
				}
			}
			if err != nil {
				return err
			}
			if n.exists() {
				if n.typ != typeDir {
					return errdefs.ErrNotDir
				}
				continue
			}
			if _, _, err := t.create(ctx, n.parent, n.name, typeDir, UnixMode(perm)); err != nil {
				return err
			}
		}
		return nil
	})
}

// ReadDir returns the entries of directory name (following symbolic links)
// sorted by name. A non-directory is errdefs.ErrNotDir.
func (f *FS) ReadDir(ctx context.Context, name string) ([]fs.DirEntry, error) {
	const op = "readdir"
	if err := validPath(op, name); err != nil {
		return nil, err
	}
	if v, rel, ok := f.virtual(ctx, name); ok {
		out, err := v.ReadDir(ctx, rel)
		return out, virtErr(op, name, err)
	}
	var out []fs.DirEntry
	err := f.read(ctx, op, name, func(t *txn) error {
		n, err := t.lookupDir(ctx, name)
		if err != nil {
			return err
		}
		out, err = t.readDir(ctx, n.ino)
		return err
	})
	return out, err
}

// DirInfo is an entry of a directory as ReadDirInfo reads it.
type DirInfo struct {
	Name string
	// Info is the entry's attributes (not following a symbolic link);
	// its Sys is an *Attr.
	Info fs.FileInfo
	// Target is a symbolic link's target.
	Target string
	// Xattrs are the entry's own extended attributes (a link's, not its
	// target's; nil when none, or not asked for).
	Xattrs map[string][]byte
}

// ReadDirInfo lists directory name (following symbolic links) in name
// order with each entry's attributes, a symbolic link's target and, when
// xattrs is set, the entry's extended attributes, all read under one lock
// in one snapshot: a walk of a tree need not resolve each entry's path
// again. A virtual directory's entries carry their Info only.
func (f *FS) ReadDirInfo(ctx context.Context, name string, xattrs bool) ([]DirInfo, error) {
	const op = "readdir"
	if err := validPath(op, name); err != nil {
		return nil, err
	}
	if v, rel, ok := f.virtual(ctx, name); ok {
		return virtualDirInfo(ctx, op, name, v, rel)
	}
	var out []DirInfo
	err := f.read(ctx, op, name, func(t *txn) error {
		n, err := t.lookupDir(ctx, name)
		if err != nil {
			return err
		}
		out, err = t.dirInfo(ctx, n.ino, xattrs)
		return err
	})
	return out, err
}

// dirInfo reads directory ino's entries for ReadDirInfo.
func (t *txn) dirInfo(ctx context.Context, ino uint64, xattrs bool) ([]DirInfo, error) {
	des, err := t.readDir(ctx, ino)
	if err != nil {
		return nil, err
	}
	out := make([]DirInfo, len(des))
	infos := make([]fileInfo, len(des)) // one allocation for the listing
	for i, de := range des {
		e := de.(*dirEntry)
		fi := &infos[i]
		fi.name, fi.ino = e.name, e.ino
		if fi.a, err = t.attr(ctx, e.ino); err != nil {
			return nil, err
		}
		out[i] = DirInfo{Name: e.name, Info: fi}
		if e.typ == typeSymlink {
			if out[i].Target, err = t.readlink(ctx, e.ino); err != nil {
				return nil, err
			}
		}
		if xattrs {
			if out[i].Xattrs, err = t.xattrs(ctx, e.ino); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// virtualDirInfo lists directory rel of virtual mount v (at name) for
// ReadDirInfo.
func virtualDirInfo(ctx context.Context, op, name string, v Virtual, rel string) ([]DirInfo, error) {
	des, err := v.ReadDir(ctx, rel)
	if err != nil {
		return nil, virtErr(op, name, err)
	}
	out := make([]DirInfo, len(des))
	for i, de := range des {
		fi, err := de.Info()
		if err != nil {
			return nil, virtErr(op, pathIn(name, de.Name()), err)
		}
		out[i] = DirInfo{Name: de.Name(), Info: fi}
	}
	return out, nil
}

// ReadDirPage returns at most limit (> 0) entries of directory name
// (following symbolic links) whose names sort after after, in name order,
// and whether more follow. Unlike ReadDir's, each entry's Info is read
// with the listing, in the same snapshot: a page reads the directory from
// after on, not from its start, and each entry's attributes once.
func (f *FS) ReadDirPage(ctx context.Context, name, after string, limit int) ([]fs.DirEntry, bool, error) {
	const op = "readdir"
	if err := validPath(op, name); err != nil {
		return nil, false, err
	}
	if limit <= 0 {
		return nil, false, &fs.PathError{Op: op, Path: name, Err: fmt.Errorf("%w: page limit %d", fs.ErrInvalid, limit)}
	}
	if v, rel, ok := f.virtual(ctx, name); ok {
		out, err := v.ReadDir(ctx, rel)
		if err != nil {
			return nil, false, virtErr(op, name, err)
		}
		out = out[sort.Search(len(out), func(i int) bool { return out[i].Name() > after }):]
		if len(out) <= limit {
			return out, false, nil
		}
		return out[:limit], true, nil
	}
	var out []fs.DirEntry
	more := false
	err := f.read(ctx, op, name, func(t *txn) error {
		n, err := t.lookupDir(ctx, name)
		if err != nil {
			return err
		}
		start, end := inoRange(n.ino, kindDirent)
		if after != "" {
			start = append(inoKey(n.ino, kindDirent, after), 0)
		}
		if out, more, err = t.scanDir(ctx, start, end, limit); err != nil {
			return err
		}
		for _, de := range out {
			e := de.(*dirEntry)
			a, err := t.attr(ctx, e.ino)
			if err != nil {
				return err
			}
			e.info = &fileInfo{name: e.name, ino: e.ino, a: a}
		}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	return out, more, nil
}

// readDir lists directory ino in name order. Entries carry the name and
// type; Info reads the attributes when called.
func (t *txn) readDir(ctx context.Context, ino uint64) ([]fs.DirEntry, error) {
	start, end := inoRange(ino, kindDirent)
	out, _, err := t.scanDir(ctx, start, end, -1)
	return out, err
}

// scanDir lists the entries with keys in [start, end) in name order, at
// most limit of them (no limit when negative), and whether more follow.
func (t *txn) scanDir(ctx context.Context, start, end []byte, limit int) (out []fs.DirEntry, more bool, err error) {
	infoCtx := context.WithoutCancel(ctx) // Info may be called later
	err = t.view.Scan(ctx, start, end, func(k, v []byte) error {
		if len(out) == limit {
			more = true
			return kv.Stop
		}
		d, err := decodeDirent(v)
		if err != nil {
			return err
		}
		out = append(out, &dirEntry{fsys: t.f, ctx: infoCtx, name: string(k[10:]), ino: d.ino, typ: d.typ})
		return nil
	})
	return out, more, err
}

// dirEntry is an fs.DirEntry whose Info reads the inode's attributes at
// the time of the call (io/fs allows either time; an entry removed since
// the listing is fs.ErrNotExist), or returns those read with the listing
// (ReadDirPage).
type dirEntry struct {
	fsys *FS
	ctx  context.Context
	name string
	ino  uint64
	typ  fileType
	info *fileInfo // read with the listing; nil: read by Info
}

var _ fs.DirEntry = (*dirEntry)(nil)

func (e *dirEntry) Name() string      { return e.name }
func (e *dirEntry) IsDir() bool       { return e.typ == typeDir }
func (e *dirEntry) Type() fs.FileMode { return e.typ.mode() }
func (e *dirEntry) String() string    { return fs.FormatDirEntry(e) }

// Ino returns the entry's inode number (the Ino of its Info's *Attr)
// without reading its attributes.
func (e *dirEntry) Ino() uint64 { return e.ino }

func (e *dirEntry) Info() (fs.FileInfo, error) {
	if e.info != nil {
		return e.info, nil
	}
	fi := &fileInfo{name: e.name, ino: e.ino}
	err := e.fsys.read(e.ctx, "stat", e.name, func(t *txn) error {
		var err error
		fi.a, err = t.attr(e.ctx, e.ino)
		return err
	})
	if err != nil {
		return nil, err
	}
	return fi, nil
}

// Remove removes file, symbolic link (not its target) or empty directory
// name. A non-empty directory is errdefs.ErrNotEmpty; the root is
// fs.ErrInvalid. An inode with other hard links or open handles lives on.
func (f *FS) Remove(ctx context.Context, name string) error {
	const op = "remove"
	if err := validPath(op, name); err != nil {
		return err
	}
	if done, err := f.virtualRemove(ctx, op, name); done {
		return err
	}
	return f.update(ctx, op, name, func(t *txn) error {
		n, err := t.lookup(ctx, name, false)
		if err != nil {
			return err
		}
		if n.ino == rootIno {
			return fmt.Errorf("%w: cannot remove the workspace root", fs.ErrInvalid)
		}
		if n.typ == typeDir {
			empty, err := t.dirEmpty(ctx, n.ino)
			if err != nil {
				return err
			}
			if !empty {
				return errdefs.ErrNotEmpty
			}
		}
		return t.unlink(ctx, n.parent, n.name, dirent{ino: n.ino, typ: n.typ})
	})
}

// RemoveAll removes name and everything beneath it in one atomic mutation.
// A missing name is not an error; the root is fs.ErrInvalid.
func (f *FS) RemoveAll(ctx context.Context, name string) error {
	const op = "removeall"
	if err := validPath(op, name); err != nil {
		return err
	}
	if done, err := f.virtualRemove(ctx, op, name); done {
		return err
	}
	return f.update(ctx, op, name, func(t *txn) error {
		n, err := t.resolve(ctx, name, false)
		if errors.Is(err, fs.ErrNotExist) || err == nil && !n.exists() {
			return nil
		}
		if err != nil {
			return err
		}
		if n.ino == rootIno {
			return fmt.Errorf("%w: cannot remove the workspace root", fs.ErrInvalid)
		}
		if n.typ == typeDir {
			if err := t.emptyDir(ctx, n.ino); err != nil {
				return err
			}
		}
		return t.unlink(ctx, n.parent, n.name, dirent{ino: n.ino, typ: n.typ})
	})
}

// emptyDir unlinks everything beneath directory ino.
func (t *txn) emptyDir(ctx context.Context, ino uint64) error {
	type child struct {
		name string
		d    dirent
	}
	var children []child
	start, end := inoRange(ino, kindDirent)
	err := t.view.Scan(ctx, start, end, func(k, v []byte) error {
		d, err := decodeDirent(v)
		children = append(children, child{string(k[10:]), d})
		return err
	})
	if err != nil {
		return err
	}
	for _, c := range children {
		if c.d.typ == typeDir {
			if err := t.emptyDir(ctx, c.d.ino); err != nil {
				return err
			}
		}
		if err := t.unlink(ctx, ino, c.name, c.d); err != nil {
			return err
		}
	}
	return nil
}
