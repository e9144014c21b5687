package vfs

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path"

	"github.com/forkspace/forkspace/errdefs"
)

// checkTwo is the common start of operations on two paths (rename, link):
// both must be valid, newname must be writable (not under a read-only
// mount), and oldname is hydrated if it is a lazy mount stub.
func (f *FS) checkTwo(ctx context.Context, op, oldname, newname string) error {
	if err := validPath(op, oldname); err != nil {
		return err
	}
	if err := validPath(op, newname); err != nil {
		return err
	}
	if err := f.checkWrite(ctx, op, newname); err != nil {
		return err
	}
	return f.hydrate(ctx, op, oldname)
}

// Rename moves oldname to newname atomically, with POSIX semantics: an
// existing file at newname is replaced, and so is an empty directory when
// oldname is a directory. The errors are Linux's, checked in its order: a
// directory into its own subtree (or the root anywhere) fs.ErrInvalid; an
// entry onto a directory that contains it (rename b/c b)
// errdefs.ErrNotEmpty; a directory over a non-directory errdefs.ErrNotDir,
// a non-directory over a directory errdefs.ErrIsDir, a non-empty target
// directory errdefs.ErrNotEmpty. Symbolic links are moved,
// not followed. Renaming a file onto itself, or onto another hard link of
// the same inode, does nothing. Errors name oldname.
func (f *FS) Rename(ctx context.Context, oldname, newname string) error {
	return f.rename(ctx, oldname, newname, false)
}

// RenameNoReplace is Rename that fails with fs.ErrExist when newname
// exists (even as a dangling symbolic link), checked in the same atomic
// mutation (rename(2) with RENAME_NOREPLACE).
func (f *FS) RenameNoReplace(ctx context.Context, oldname, newname string) error {
	return f.rename(ctx, oldname, newname, true)
}

func (f *FS) rename(ctx context.Context, oldname, newname string, noReplace bool) (err error) {
	const op = "rename"
	if err := f.checkTwo(ctx, op, oldname, newname); err != nil {
		return err
	}
	defer f.changedOn(ctx, op, &err, newname)
	return f.update(ctx, op, oldname, func(t *txn) error {
		// Both parents resolve before the source must exist, as in
		// rename(2).
		src, err := t.resolve(ctx, oldname, false)
		if err != nil {
			return err
		}
		dst, err := t.resolve(ctx, newname, false)
		if errors.Is(err, fs.ErrNotExist) {
			// Name what is missing: the destination's directory.
			return &fs.PathError{Op: op, Path: path.Dir(newname), Err: err}
		}
		if err != nil {
			return err
		}
		if !src.exists() {
			return fs.ErrNotExist
		}
		if noReplace && dst.exists() {
			return fs.ErrExist
		}
		if src.ino == rootIno || dst.ino == rootIno {
			return fmt.Errorf("%w: cannot rename the workspace root", fs.ErrInvalid)
		}
		if dst.ino == src.ino {
			return nil // the same entry, or two links to one inode
		}
		if src.typ == typeDir {
			inside, err := t.within(ctx, dst.parent, src.ino)
			if err != nil {
				return err
			}
			if inside {
				return fmt.Errorf("%w: cannot move a directory into itself", fs.ErrInvalid)
			}
		}
		if dst.exists() && dst.typ == typeDir {
			above, err := t.within(ctx, src.parent, dst.ino)
			if err != nil {
				return err
			}
			if above {
				return fmt.Errorf("%w: %s contains %s", errdefs.ErrNotEmpty, newname, oldname)
			}
		}
		if dst.exists() {
			if err := t.checkReplace(ctx, src.typ, dst); err != nil {
				return err
			}
			if err := t.unlink(ctx, dst.parent, dst.name, dirent{ino: dst.ino, typ: dst.typ}); err != nil {
				return err
			}
		}
		return t.move(ctx, src, dst.parent, dst.name)
	})
}

// checkReplace reports whether an entry of type typ may replace dst.
func (t *txn) checkReplace(ctx context.Context, typ fileType, dst node) error {
	switch {
	case typ == typeDir && dst.typ != typeDir:
		return errdefs.ErrNotDir
	case typ != typeDir && dst.typ == typeDir:
		return errdefs.ErrIsDir
	case dst.typ == typeDir:
		empty, err := t.dirEmpty(ctx, dst.ino)
		if err != nil {
			return err
		}
		if !empty {
			return errdefs.ErrNotEmpty
		}
	}
	return nil
}

// move relinks src as parent/name, which is free.
func (t *txn) move(ctx context.Context, src node, parent uint64, name string) error {
	dlink := 0
	if src.typ == typeDir {
		dlink = 1
	}
	t.del(inoKey(src.parent, kindDirent, src.name))
	if err := t.touchDir(ctx, src.parent, -dlink); err != nil {
		return err
	}
	t.set(inoKey(parent, kindDirent, name), encodeDirent(src.ino, src.typ))
	if err := t.touchDir(ctx, parent, dlink); err != nil {
		return err
	}
	return t.relink(ctx, src, parent, name)
}

// relink records that the link of inode n (n.parent/n.name) is now
// parent/name: its primary link (always, for a directory) or a secondary
// link record; its ctime is now.
func (t *txn) relink(ctx context.Context, n node, parent uint64, name string) error {
	a, err := t.attr(ctx, n.ino)
	if err != nil {
		return err
	}
	if a.parent == n.parent && a.name == n.name || n.typ == typeDir {
		a.parent, a.name = parent, name
	} else {
		t.del(backlinkKey(n.ino, n.parent, n.name))
		t.set(backlinkKey(n.ino, parent, name), backlinkValue)
	}
	a.ctime = t.now
	t.putAttr(n.ino, &a)
	return nil
}

// RenameExchange swaps the entries oldname and newname atomically
// (rename(2) with RENAME_EXCHANGE): both must exist (fs.ErrNotExist) and
// may be of different types; a directory cannot go into its own subtree
// and the root cannot move (fs.ErrInvalid). Symbolic links are swapped,
// not followed; two links of one inode swap to no effect. Errors name
// oldname.
func (f *FS) RenameExchange(ctx context.Context, oldname, newname string) (err error) {
	const op = "rename"
	if err := f.checkTwo(ctx, op, oldname, newname); err != nil {
		return err
	}
	if err := f.checkWrite(ctx, op, oldname); err != nil {
		return err
	}
	if err := f.hydrate(ctx, op, newname); err != nil {
		return err
	}
	defer f.changedOn(ctx, op, &err, newname)
	return f.update(ctx, op, oldname, func(t *txn) error {
		// Both parents resolve before either entry must exist, as in
		// rename(2).
		a, err := t.resolve(ctx, oldname, false)
		if err != nil {
			return err
		}
		b, err := t.resolve(ctx, newname, false)
		if err != nil {
			return err
		}
		if !a.exists() || !b.exists() {
			return fs.ErrNotExist
		}
		if a.ino == rootIno || b.ino == rootIno {
			return fmt.Errorf("%w: cannot rename the workspace root", fs.ErrInvalid)
		}
		if a.ino == b.ino {
			return nil
		}
		for _, c := range [][2]node{{a, b}, {b, a}} {
			if c[0].typ != typeDir {
				continue
			}
			inside, err := t.within(ctx, c[1].parent, c[0].ino)
			if err != nil {
				return err
			}
			if inside {
				return fmt.Errorf("%w: cannot move a directory into itself", fs.ErrInvalid)
			}
		}
		t.set(inoKey(a.parent, kindDirent, a.name), encodeDirent(b.ino, b.typ))
		t.set(inoKey(b.parent, kindDirent, b.name), encodeDirent(a.ino, a.typ))
		// A directory's parent counts it as a link.
		dlink := 0
		if b.typ == typeDir {
			dlink++
		}
		if a.typ == typeDir {
			dlink--
		}
		if err := t.touchDir(ctx, a.parent, dlink); err != nil {
			return err
		}
		if err := t.touchDir(ctx, b.parent, -dlink); err != nil {
			return err
		}
		if err := t.relink(ctx, a, b.parent, b.name); err != nil {
			return err
		}
		return t.relink(ctx, b, a.parent, a.name)
	})
}

// within reports whether directory dir is ino or lies beneath it, walking
// primary links (exact for directories, which have one link) to the root.
func (t *txn) within(ctx context.Context, dir, ino uint64) (bool, error) {
	for dir != rootIno && dir != 0 {
		if dir == ino {
			return true, nil
		}
		a, err := t.attr(ctx, dir)
		if err != nil {
			return false, err
		}
		dir = a.parent
	}
	return dir == ino, nil
}
