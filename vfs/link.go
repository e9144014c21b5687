package vfs

import (
	"context"
	"fmt"
	"io/fs"
	"strings"
)

// Symlink creates newname as a symbolic link to target. The target is
// stored as given (it may dangle); it is resolved inside the workspace when
// followed: relative to the link's directory, absolute targets from the
// workspace root, never above the root. An empty target, one with a NUL
// byte or longer than MaxPathLen is fs.ErrInvalid; an existing newname is
// fs.ErrExist.
func (f *FS) Symlink(ctx context.Context, target, newname string) error {
	const op = "symlink"
	if err := validPath(op, newname); err != nil {
		return err
	}
	if target == "" || len(target) > MaxPathLen || strings.IndexByte(target, 0) >= 0 {
		return &fs.PathError{Op: op, Path: newname, Err: fmt.Errorf("%w: bad symlink target", fs.ErrInvalid)}
	}
	return f.update(ctx, op, newname, func(t *txn) error {
		n, err := t.resolve(ctx, newname, false)
		if err != nil {
			return err
		}
		if n.exists() {
			return fs.ErrExist
		}
		ino, a, err := t.create(ctx, n.parent, n.name, typeSymlink, 0o777)
		if err != nil {
			return err
		}
		a.size = int64(len(target))
		t.putAttr(ino, &a)
		t.set(inoKey(ino, kindLink, ""), []byte(target))
		return nil
	})
}

// Mknod creates a special file at name: a FIFO (mode has
// fs.ModeNamedPipe), a socket (fs.ModeSocket), a character device
// (fs.ModeDevice|fs.ModeCharDevice) or a block device (fs.ModeDevice),
// with dev as a device's number; mode without type bits creates an empty
// regular file, as mknod(2) does. Special files are names and attributes
// only: they fork, checkpoint, diff and link like files, and opening one
// through the FS is errors.ErrUnsupported (a kernel that mounts the
// workspace implements them itself). An existing name is fs.ErrExist;
// other type bits are fs.ErrInvalid.
func (f *FS) Mknod(ctx context.Context, name string, mode fs.FileMode, dev uint64) error {
	const op = "mknod"
	if err := validPath(op, name); err != nil {
		return err
	}
	typ, ok := typeOfMode(mode)
	if !ok || typ == typeDir || typ == typeSymlink {
		return &fs.PathError{Op: op, Path: name, Err: fmt.Errorf("%w: mknod makes FIFOs, sockets, devices and regular files, not %v", fs.ErrInvalid, mode.Type())}
	}
	if !typ.device() {
		dev = 0
	}
	if dev > 1<<63-1 {
		return &fs.PathError{Op: op, Path: name, Err: fmt.Errorf("%w: device number out of range", fs.ErrInvalid)}
	}
	return f.update(ctx, op, name, func(t *txn) error {
		n, err := t.resolve(ctx, name, false)
		if err != nil {
			return err
		}
		if n.exists() {
			return fs.ErrExist
		}
		ino, a, err := t.create(ctx, n.parent, n.name, typ, UnixMode(mode))
		if err != nil || dev == 0 {
			return err
		}
		a.size = int64(dev)
		t.putAttr(ino, &a)
		return nil
	})
}

// Readlink returns the target of symbolic link name. A name that is not a
// symbolic link is fs.ErrInvalid.
func (f *FS) Readlink(ctx context.Context, name string) (string, error) {
	const op = "readlink"
	if err := validPath(op, name); err != nil {
		return "", err
	}
	var target string
	err := f.read(ctx, op, name, func(t *txn) error {
		n, err := t.lookup(ctx, name, false)
		if err != nil {
			return err
		}
		if n.typ != typeSymlink {
			return fmt.Errorf("%w: not a symbolic link", fs.ErrInvalid)
		}
		target, err = t.readlink(ctx, n.ino)
		return err
	})
	return target, err
}

// Link creates newname as a hard link to the inode oldname names (a final
// symbolic link is linked itself, not followed). Directories cannot be
// linked (fs.ErrPermission); an existing newname is fs.ErrExist. Errors
// name oldname.
func (f *FS) Link(ctx context.Context, oldname, newname string) (err error) {
	const op = "link"
	if err := f.checkTwo(ctx, op, oldname, newname); err != nil {
		return err
	}
	defer f.changedOn(ctx, op, &err, newname)
	return f.update(ctx, op, oldname, func(t *txn) error {
		src, err := t.lookup(ctx, oldname, false)
		if err != nil {
			return err
		}
		dst, err := t.resolve(ctx, newname, false)
		if err != nil {
			return err
		}
		if dst.exists() {
			return fs.ErrExist
		}
		if src.typ == typeDir {
			return fmt.Errorf("%w: cannot hard-link a directory", fs.ErrPermission)
		}
		a, err := t.attr(ctx, src.ino)
		if err != nil {
			return err
		}
		a.nlink++
		a.ctime = t.now
		t.putAttr(src.ino, &a)
		t.set(inoKey(dst.parent, kindDirent, dst.name), encodeDirent(src.ino, src.typ))
		t.set(backlinkKey(src.ino, dst.parent, dst.name), backlinkValue)
		return t.touchDir(ctx, dst.parent, 0)
	})
}
