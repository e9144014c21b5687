package transfer

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"path"

	"github.com/forkspace/forkspace/vfs"
)

// wsSource reads a tree of a workspace (live or a snapshot) in name order.
type wsSource struct {
	fs   *vfs.FS
	root string // a vfs path
	skip func(string, error) error
	// copyLinks emits every name of a hard-linked file as a file of its
	// own, for sinks that cannot link entries (zip).
	copyLinks bool
}

var (
	_ source  = (*wsSource)(nil)
	_ visitor = (*wsSource)(nil)
)

func newWSSource(src *vfs.FS, srcPath string, skip func(string, error) error) (*wsSource, error) {
	root, err := vfs.CleanPath(srcPath)
	if err != nil {
		return nil, err
	}
	return &wsSource{fs: src, root: root, skip: skip}, nil
}

func (s *wsSource) join(dir, name string) string {
	if dir == "." {
		return name
	}
	return dir + "/" + name
}

// walk emits the root (following a link named by the caller) and, for a
// directory, everything beneath it. A regular file as root is emitted
// under its base name.
func (s *wsSource) walk(ctx context.Context, fn func(*entry, io.Reader) error) error {
	return s.visit(ctx, true, fn)
}

// visit walks the tree; with bodies it opens each regular file for fn.
// Each directory is listed once with its entries' attributes (and, with
// bodies, their extended attributes and link targets), so no entry's path
// is resolved again but to read a file's bytes.
func (s *wsSource) visit(ctx context.Context, bodies bool, fn func(*entry, io.Reader) error) error {
	fi, err := s.fs.Stat(ctx, s.root)
	if err != nil {
		return err
	}
	root := vfs.DirInfo{Name: path.Base(s.root), Info: fi}
	if bodies {
		if root.Xattrs, err = s.fs.Xattrs(ctx, s.root); err != nil {
			return err
		}
	}
	seen := make(map[uint64]string) // inode → first name, for hard links
	if !fi.IsDir() {
		return s.emit(ctx, root.Name, s.root, root, seen, bodies, nil, fn)
	}
	e := s.entry(".", root)
	if err := fn(e, nil); err != nil {
		return err
	}
	return s.dir(ctx, s.root, ".", seen, bodies, fn)
}

// dir passes the entries beneath directory p (named name in the
// transfer) to fn in walk order, listed and read ahead (walkAhead).
func (s *wsSource) dir(ctx context.Context, p, name string, seen map[uint64]string, bodies bool, fn func(*entry, io.Reader) error) error {
	wa := s.startWalk(ctx, p, name, bodies)
	defer wa.stop()
	for w := range wa.items {
		if w.err != nil {
			return w.err
		}
		if err := s.emit(ctx, w.name, w.p, w.di, seen, bodies, w.af, fn); err != nil {
			return err
		}
	}
	return ctx.Err()
}

// readsAhead reports whether the walk reads directory entry di (at p)
// ahead: a small regular file of one name.
func (s *wsSource) readsAhead(di vfs.DirInfo, p string) bool {
	if !di.Info.Mode().IsRegular() || di.Info.Size() > smallFile || s.fs.IsVirtual(p) {
		return false
	}
	a, ok := di.Info.Sys().(*vfs.Attr)
	return !ok || a.Nlink <= 1 || s.copyLinks
}

// emit passes one entry (a directory without its contents), listed as
// di, to fn, with the bytes of af when the file was read ahead.
func (s *wsSource) emit(ctx context.Context, name, p string, di vfs.DirInfo, seen map[uint64]string, bodies bool, af *aheadFile, fn func(*entry, io.Reader) error) error {
	fi := di.Info
	if fi.Mode()&(fs.ModeNamedPipe|fs.ModeSocket|fs.ModeDevice) != 0 {
		return unsupported(s.skip, name, typeName(fi.Mode()))
	}
	e := s.entry(name, di)
	if a, ok := fi.Sys().(*vfs.Attr); ok && !fi.IsDir() && a.Nlink > 1 && !s.copyLinks {
		if first, ok := seen[a.Ino]; ok {
			e.kind, e.target, e.size, e.xattrs = kindHardlink, first, 0, nil
			return fn(e, nil)
		}
		seen[a.Ino] = name
	}
	switch {
	case e.kind == kindSymlink:
		e.target, e.xattrs = di.Target, nil
		return fn(e, nil)
	case !bodies || e.kind != kindFile:
		return fn(e, nil)
	case af != nil:
		<-af.done
		if af.err != nil {
			return af.err
		}
		return fn(e, bytes.NewReader(af.data[:min(int64(len(af.data)), e.size)]))
	}
	return s.file(ctx, p, e, fn)
}

// file passes regular file e (at p) to fn with its bytes, streamed.
func (s *wsSource) file(ctx context.Context, p string, e *entry, fn func(*entry, io.Reader) error) error {
	f, err := s.fs.Open(ctx, p)
	if err != nil {
		return err
	}
	err = fn(e, io.LimitReader(f, e.size))
	return errors.Join(err, f.Close())
}

// entry describes di (its Info's Sys is a *vfs.Attr) under name, with its
// extended attributes.
func (s *wsSource) entry(name string, di vfs.DirInfo) *entry {
	fi := di.Info
	e := &entry{name: name, mode: modeBits(fi.Mode()), mtime: fi.ModTime(), size: fi.Size(), xattrs: di.Xattrs}
	switch {
	case fi.IsDir():
		e.kind, e.size = kindDir, 0
	case fi.Mode()&fs.ModeSymlink != 0:
		e.kind, e.size = kindSymlink, 0
	default:
		e.kind = kindFile
	}
	if a, ok := fi.Sys().(*vfs.Attr); ok {
		e.uid, e.gid, e.atime = int(a.Uid), int(a.Gid), a.Atime
	}
	return e
}
