package vfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"slices"
	"time"
)

// ApplyDiff applies changes, the result of Diff(ctx, from, src, opts), to
// dst, which must hold from's state (a fork of it, or another copy), so
// that dst ends in src's state: the same entries with the same types,
// contents, symbolic link targets, hard links, modes, owners, file
// modification times and extended attributes (inode numbers and other
// times are dst's own). Added and Modified steps read what they write from
// src at their path. The steps apply one by one, in order, through dst's
// ordinary operations (Remove, Rename, Mkdir, Link, Symlink, Mknod, OpenFile,
// Chmod, Chown, Chtimes, Setxattr, Removexattr), so each is durable when
// it returns. The first failure stops ApplyDiff with an error naming the
// step, and the steps before it stay applied. A step of unknown Op is
// fs.ErrInvalid.
func ApplyDiff(ctx context.Context, dst, src *FS, changes []Change) error {
	for i, c := range changes {
		if err := applyStep(ctx, dst, src, c); err != nil {
			return fmt.Errorf("apply step %d (%s %s): %w", i+1, c.Op, c.Path, err)
		}
	}
	return nil
}

func applyStep(ctx context.Context, dst, src *FS, c Change) error {
	switch c.Op {
	case Deleted:
		return dst.Remove(ctx, c.Path)
	case Renamed:
		return dst.Rename(ctx, c.OldPath, c.Path)
	case Added:
		return create(ctx, dst, src, c)
	case Modified:
		if !c.Replaced && c.Type != "symlink" {
			return update(ctx, dst, src, c.Path)
		}
		// A symbolic link changes only by being replaced.
		if err := dst.Remove(ctx, c.Path); err != nil {
			return err
		}
		return create(ctx, dst, src, c)
	}
	return &fs.PathError{Op: "apply", Path: c.Path, Err: fmt.Errorf("%w: unknown step %v", fs.ErrInvalid, c.Op)}
}

// create makes the entry at c.Path in dst as it is in src.
func create(ctx context.Context, dst, src *FS, c Change) error {
	if c.Link != "" {
		return dst.Link(ctx, c.Link, c.Path)
	}
	return CopyEntry(ctx, dst, c.Path, src, c.Path)
}

// CopyEntry creates dstPath in dst (it must not exist; its directory
// must) as a copy of the file, directory (alone, not its entries),
// symbolic link or special file srcPath of src: contents, target or
// device number, mode, owner, extended
// attributes and (files) modification time. Merges and cherry-picks use
// it between states with different paths.
func CopyEntry(ctx context.Context, dst *FS, dstPath string, src *FS, srcPath string) error {
	fi, err := src.Lstat(ctx, srcPath)
	if err != nil {
		return err
	}
	switch {
	case fi.IsDir():
		if err := dst.Mkdir(ctx, dstPath, fi.Mode().Perm()); err != nil {
			return err
		}
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := src.Readlink(ctx, srcPath)
		if err != nil {
			return err
		}
		return dst.Symlink(ctx, target, dstPath)
	case fi.Mode()&(fs.ModeNamedPipe|fs.ModeSocket|fs.ModeDevice) != 0:
		if err := dst.Mknod(ctx, dstPath, fi.Mode(), fi.Sys().(*Attr).Rdev); err != nil {
			return err
		}
	default:
		if err := copyContents(ctx, dst, dstPath, src, srcPath, O_WRONLY|O_CREATE|O_EXCL); err != nil {
			return err
		}
	}
	return copyAttrs(ctx, dst, dstPath, src, srcPath, fi)
}

// update brings the file or directory at p in dst up to src's.
func update(ctx context.Context, dst, src *FS, p string) error {
	return UpdateEntry(ctx, dst, p, src, p)
}

// UpdateEntry brings the existing entry dstPath of dst up to srcPath of
// src: a file's contents, and the mode, owner, extended attributes and
// (files) modification time. A device whose number differs is replaced
// (no call renumbers one).
func UpdateEntry(ctx context.Context, dst *FS, dstPath string, src *FS, srcPath string) error {
	fi, err := src.Lstat(ctx, srcPath)
	if err != nil {
		return err
	}
	if rdev := fi.Sys().(*Attr).Rdev; fi.Mode()&fs.ModeDevice != 0 {
		if have, err := dst.Lstat(ctx, dstPath); err != nil || have.Sys().(*Attr).Rdev != rdev {
			if err := dst.Remove(ctx, dstPath); err != nil {
				return err
			}
			return CopyEntry(ctx, dst, dstPath, src, srcPath)
		}
	}
	if fi.Mode().IsRegular() {
		if err := copyContents(ctx, dst, dstPath, src, srcPath, O_WRONLY|O_TRUNC); err != nil {
			return err
		}
	}
	return copyAttrs(ctx, dst, dstPath, src, srcPath, fi)
}

// copyContents writes src's file sp into dst's dp, opened with flag.
func copyContents(ctx context.Context, dst *FS, dp string, src *FS, sp string, flag int) error {
	r, err := src.Open(ctx, sp)
	if err != nil {
		return err
	}
	defer func() { _ = r.Close() }()
	w, err := dst.OpenFile(ctx, dp, flag, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, r); err != nil {
		return errors.Join(err, w.Close())
	}
	return w.Close()
}

// copyAttrs gives dp in dst the mode, owner, extended attributes and
// (files) modification time fi and sp in src have.
func copyAttrs(ctx context.Context, dst *FS, dp string, src *FS, sp string, fi fs.FileInfo) error {
	a := fi.Sys().(*Attr)
	if err := dst.Chmod(ctx, dp, fi.Mode()); err != nil {
		return err
	}
	if err := dst.Chown(ctx, dp, int(a.Uid), int(a.Gid)); err != nil {
		return err
	}
	want, err := src.Listxattr(ctx, sp)
	if err != nil {
		return err
	}
	have, err := dst.Listxattr(ctx, dp)
	if err != nil {
		return err
	}
	for _, name := range have {
		if !slices.Contains(want, name) {
			if err := dst.Removexattr(ctx, dp, name); err != nil {
				return err
			}
		}
	}
	for _, name := range want {
		v, err := src.Getxattr(ctx, sp, name)
		if err != nil {
			return err
		}
		if err := dst.Setxattr(ctx, dp, name, v); err != nil {
			return err
		}
	}
	if fi.Mode().IsRegular() {
		return dst.Chtimes(ctx, dp, time.Time{}, a.Mtime)
	}
	return nil
}
