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
// ordinary operations (Remove, Rename, Mkdir, Link, Symlink, OpenFile,
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
	fi, err := src.Lstat(ctx, c.Path)
	if err != nil {
		return err
	}
	switch {
	case fi.IsDir():
		if err := dst.Mkdir(ctx, c.Path, fi.Mode().Perm()); err != nil {
			return err
		}
	case fi.Mode()&fs.ModeSymlink != 0:
		target, err := src.Readlink(ctx, c.Path)
		if err != nil {
			return err
		}
		return dst.Symlink(ctx, target, c.Path)
	default:
		if err := copyContents(ctx, dst, src, c.Path, O_WRONLY|O_CREATE|O_EXCL); err != nil {
			return err
		}
	}
	return copyAttrs(ctx, dst, src, c.Path, fi)
}

// update brings the file or directory at p in dst up to src's.
func update(ctx context.Context, dst, src *FS, p string) error {
	fi, err := src.Lstat(ctx, p)
	if err != nil {
		return err
	}
	if fi.Mode().IsRegular() {
		if err := copyContents(ctx, dst, src, p, O_WRONLY|O_TRUNC); err != nil {
			return err
		}
	}
	return copyAttrs(ctx, dst, src, p, fi)
}

// copyContents writes src's file p into dst's, opened with flag.
func copyContents(ctx context.Context, dst, src *FS, p string, flag int) error {
	r, err := src.Open(ctx, p)
	if err != nil {
		return err
	}
	defer func() { _ = r.Close() }()
	w, err := dst.OpenFile(ctx, p, flag, 0o600)
	if err != nil {
		return err
	}
	if _, err := io.Copy(w, r); err != nil {
		return errors.Join(err, w.Close())
	}
	return w.Close()
}

// copyAttrs gives p in dst the mode, owner, extended attributes and (files)
// modification time fi and src have.
func copyAttrs(ctx context.Context, dst, src *FS, p string, fi fs.FileInfo) error {
	a := fi.Sys().(*Attr)
	if err := dst.Chmod(ctx, p, fi.Mode()); err != nil {
		return err
	}
	if err := dst.Chown(ctx, p, int(a.Uid), int(a.Gid)); err != nil {
		return err
	}
	want, err := src.Listxattr(ctx, p)
	if err != nil {
		return err
	}
	have, err := dst.Listxattr(ctx, p)
	if err != nil {
		return err
	}
	for _, name := range have {
		if !slices.Contains(want, name) {
			if err := dst.Removexattr(ctx, p, name); err != nil {
				return err
			}
		}
	}
	for _, name := range want {
		v, err := src.Getxattr(ctx, p, name)
		if err != nil {
			return err
		}
		if err := dst.Setxattr(ctx, p, name, v); err != nil {
			return err
		}
	}
	if fi.Mode().IsRegular() {
		return dst.Chtimes(ctx, p, time.Time{}, a.Mtime)
	}
	return nil
}
