package vfs

import (
	"context"
	"io/fs"
	"path"
	"time"
)

// Stat returns the attributes of the file name refers to, following
// symbolic links. FileInfo.Sys returns an *Attr. A missing file is
// fs.ErrNotExist.
func (f *FS) Stat(ctx context.Context, name string) (fs.FileInfo, error) {
	return f.stat(ctx, "stat", name, true)
}

// Lstat is Stat without following a final symbolic link.
func (f *FS) Lstat(ctx context.Context, name string) (fs.FileInfo, error) {
	return f.stat(ctx, "lstat", name, false)
}

func (f *FS) stat(ctx context.Context, op, name string, follow bool) (fs.FileInfo, error) {
	if err := validPath(op, name); err != nil {
		return nil, err
	}
	if v, rel, ok := f.virtual(ctx, name); ok {
		vi, err := v.Stat(ctx, rel)
		if err != nil {
			return nil, virtErr(op, name, err)
		}
		return namedInfo{FileInfo: vi, name: path.Base(name)}, nil
	}
	fi := &fileInfo{name: path.Base(name)}
	err := f.read(ctx, op, name, func(t *txn) error {
		n, err := t.lookup(ctx, name, follow)
		if err != nil {
			return err
		}
		fi.ino = n.ino
		fi.a, err = t.attr(ctx, n.ino)
		return err
	})
	if err != nil {
		return nil, err
	}
	return fi, nil
}

// setAttr resolves name (following a final link when follow is set) and
// lets change edit its attributes, then sets ctime to now.
func (f *FS) setAttr(ctx context.Context, op, name string, follow bool, change func(a *attr, now int64)) error {
	if err := validPath(op, name); err != nil {
		return err
	}
	return f.update(ctx, op, name, func(t *txn) error {
		n, err := t.lookup(ctx, name, follow)
		if err != nil {
			return err
		}
		a, err := t.attr(ctx, n.ino)
		if err != nil {
			return err
		}
		change(&a, t.now)
		a.ctime = t.now
		t.putAttr(n.ino, &a)
		return nil
	})
}

// Chmod sets the permission bits (and setuid, setgid, sticky) of the file
// name refers to, following symbolic links. Other bits of mode are ignored.
func (f *FS) Chmod(ctx context.Context, name string, mode fs.FileMode) error {
	return f.setAttr(ctx, "chmod", name, true, func(a *attr, _ int64) { a.perm = UnixMode(mode) })
}

// Chown sets the owner and group of the file name refers to, following
// symbolic links. A negative uid or gid leaves that value unchanged.
func (f *FS) Chown(ctx context.Context, name string, uid, gid int) error {
	return f.setAttr(ctx, "chown", name, true, chown(uid, gid))
}

// Lchown is Chown without following a final symbolic link.
func (f *FS) Lchown(ctx context.Context, name string, uid, gid int) error {
	return f.setAttr(ctx, "lchown", name, false, chown(uid, gid))
}

func chown(uid, gid int) func(a *attr, _ int64) {
	return func(a *attr, _ int64) {
		if uid >= 0 {
			a.uid = uint32(uid)
		}
		if gid >= 0 {
			a.gid = uint32(gid)
		}
	}
}

// Chtimes sets the access and modification times (nanosecond precision) of
// the file name refers to, following symbolic links. A zero time.Time
// leaves that time unchanged. Reads never update atime (noatime).
func (f *FS) Chtimes(ctx context.Context, name string, atime, mtime time.Time) error {
	return f.setAttr(ctx, "chtimes", name, true, chtimes(atime, mtime))
}

// Lchtimes is Chtimes without following a final symbolic link.
func (f *FS) Lchtimes(ctx context.Context, name string, atime, mtime time.Time) error {
	return f.setAttr(ctx, "lchtimes", name, false, chtimes(atime, mtime))
}

func chtimes(atime, mtime time.Time) func(a *attr, _ int64) {
	return func(a *attr, _ int64) {
		if !atime.IsZero() {
			a.atime = atime.UnixNano()
		}
		if !mtime.IsZero() {
			a.mtime = mtime.UnixNano()
		}
	}
}
