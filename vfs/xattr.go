package vfs

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"strings"

	"github.com/forkspace/forkspace/errdefs"
)

// Extended attribute limits (Linux's).
const (
	// MaxXattrName is the longest extended attribute name, in bytes.
	MaxXattrName = 255
	// MaxXattrValue is the largest extended attribute value, in bytes.
	MaxXattrValue = 64 << 10
)

// checkXattrName rejects an empty name, a NUL byte (fs.ErrInvalid) or a
// name longer than MaxXattrName (errdefs.ErrNameTooLong).
func checkXattrName(attr string) error {
	switch {
	case attr == "" || strings.IndexByte(attr, 0) >= 0:
		return fmt.Errorf("%w: bad attribute name %q", fs.ErrInvalid, attr)
	case len(attr) > MaxXattrName:
		return fmt.Errorf("%w: attribute name longer than %d bytes", errdefs.ErrNameTooLong, MaxXattrName)
	}
	return nil
}

// Getxattr returns the value of extended attribute attr of the file name
// refers to (following symbolic links). A missing attribute is
// fs.ErrNotExist.
func (f *FS) Getxattr(ctx context.Context, name, attr string) ([]byte, error) {
	const op = "getxattr"
	if err := validPath(op, name); err != nil {
		return nil, err
	}
	if err := checkXattrName(attr); err != nil {
		return nil, &fs.PathError{Op: op, Path: name, Err: err}
	}
	var val []byte
	err := f.read(ctx, op, name, func(t *txn) error {
		n, err := t.lookup(ctx, name, true)
		if err != nil {
			return err
		}
		v, ok, err := t.get(ctx, inoKey(n.ino, kindXattr, attr))
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("get attribute %q: %w", attr, fs.ErrNotExist)
		}
		val = append([]byte{}, v...)
		return nil
	})
	return val, err
}

// Setxattr creates or replaces extended attribute attr of the file name
// refers to (following symbolic links). A value over MaxXattrValue bytes is
// fs.ErrInvalid.
func (f *FS) Setxattr(ctx context.Context, name, attr string, value []byte) error {
	const op = "setxattr"
	if err := validPath(op, name); err != nil {
		return err
	}
	if err := checkXattrName(attr); err != nil {
		return &fs.PathError{Op: op, Path: name, Err: err}
	}
	if len(value) > MaxXattrValue {
		return &fs.PathError{Op: op, Path: name, Err: fmt.Errorf("%w: attribute value over %d bytes", fs.ErrInvalid, MaxXattrValue)}
	}
	v := append([]byte{}, value...)
	return f.xattrUpdate(ctx, op, name, func(t *txn, ino uint64) error {
		t.set(inoKey(ino, kindXattr, attr), v)
		return nil
	})
}

// Removexattr deletes extended attribute attr of the file name refers to
// (following symbolic links). A missing attribute is fs.ErrNotExist.
func (f *FS) Removexattr(ctx context.Context, name, attr string) error {
	const op = "removexattr"
	if err := validPath(op, name); err != nil {
		return err
	}
	if err := checkXattrName(attr); err != nil {
		return &fs.PathError{Op: op, Path: name, Err: err}
	}
	return f.xattrUpdate(ctx, op, name, func(t *txn, ino uint64) error {
		k := inoKey(ino, kindXattr, attr)
		if _, ok, err := t.get(ctx, k); err != nil || !ok {
			if err == nil {
				err = fmt.Errorf("remove attribute %q: %w", attr, fs.ErrNotExist)
			}
			return err
		}
		t.del(k)
		return nil
	})
}

// xattrUpdate resolves name, lets change edit its attributes and bumps its
// ctime.
func (f *FS) xattrUpdate(ctx context.Context, op, name string, change func(t *txn, ino uint64) error) error {
	return f.update(ctx, op, name, func(t *txn) error {
		n, err := t.lookup(ctx, name, true)
		if err != nil {
			return err
		}
		if err := change(t, n.ino); err != nil {
			return err
		}
		a, err := t.attr(ctx, n.ino)
		if err != nil {
			return err
		}
		a.ctime = t.now
		t.putAttr(n.ino, &a)
		return nil
	})
}

// Listxattr returns the names of the extended attributes of the file name
// refers to (following symbolic links), sorted.
func (f *FS) Listxattr(ctx context.Context, name string) ([]string, error) {
	const op = "listxattr"
	if err := validPath(op, name); err != nil {
		return nil, err
	}
	var names []string
	err := f.read(ctx, op, name, func(t *txn) error {
		n, err := t.lookup(ctx, name, true)
		if err != nil {
			return err
		}
		start, end := inoRange(n.ino, kindXattr)
		return t.view.Scan(ctx, start, end, func(k, _ []byte) error {
			names = append(names, string(k[10:]))
			return nil
		})
	})
	return names, err
}

// Xattrs returns the extended attributes of the file name refers to
// (following symbolic links), names to values, read in one lookup; nil
// when it has none.
func (f *FS) Xattrs(ctx context.Context, name string) (map[string][]byte, error) {
	const op = "listxattr"
	if err := validPath(op, name); err != nil {
		return nil, err
	}
	var out map[string][]byte
	err := f.read(ctx, op, name, func(t *txn) error {
		n, err := t.lookup(ctx, name, true)
		if err != nil {
			return err
		}
		out, err = t.xattrs(ctx, n.ino)
		return err
	})
	return out, err
}

// xattrs returns the extended attributes of inode ino (nil when none).
func (t *txn) xattrs(ctx context.Context, ino uint64) (map[string][]byte, error) {
	var out map[string][]byte
	start, end := inoRange(ino, kindXattr)
	err := t.view.Scan(ctx, start, end, func(k, v []byte) error {
		if out == nil {
			out = make(map[string][]byte)
		}
		out[string(k[10:])] = bytes.Clone(v)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("read attributes of inode %d: %w", ino, err)
	}
	return out, nil
}
