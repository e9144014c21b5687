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
func (s *wsSource) visit(ctx context.Context, bodies bool, fn func(*entry, io.Reader) error) error {
	fi, err := s.fs.Stat(ctx, s.root)
	if err != nil {
		return err
	}
	seen := make(map[uint64]string) // inode → first name, for hard links
	if !fi.IsDir() {
		return s.emit(ctx, path.Base(s.root), s.root, fi, seen, bodies, nil, fn)
	}
	e := s.entry(".", fi)
	if bodies {
		if e.xattrs, err = wsXattrs(ctx, s.fs, s.root); err != nil {
			return err
		}
	}
	if err := fn(e, nil); err != nil {
		return err
	}
	return s.dir(ctx, s.root, ".", seen, bodies, fn)
}

func (s *wsSource) dir(ctx context.Context, p, name string, seen map[uint64]string, bodies bool, fn func(*entry, io.Reader) error) error {
	des, err := s.fs.ReadDir(ctx, p)
	if err != nil {
		return err
	}
	paths := make([]aheadPath, len(des))
	for i, de := range des {
		if cp := s.join(p, de.Name()); bodies {
			paths[i] = s.readsAhead(de, cp)
		}
	}
	ra := newReadAhead(ctx, s.fs, paths)
	defer ra.stop()
	for i, de := range des {
		fi, err := de.Info()
		if err != nil {
			return err
		}
		cp, cn := s.join(p, de.Name()), s.join(name, de.Name())
		if s.fs.IsVirtual(cp) {
			continue // a virtual mount: served live, never exported
		}
		if err := s.emit(ctx, cn, cp, fi, seen, bodies, ra.take(i), fn); err != nil {
			return err
		}
		if fi.IsDir() {
			if err := s.dir(ctx, cp, cn, seen, bodies, fn); err != nil {
				return err
			}
		}
	}
	return nil
}

// readsAhead returns what the walk reads ahead of directory entry de (at
// p): a small regular file of one name, or nothing.
func (s *wsSource) readsAhead(de fs.DirEntry, p string) aheadPath {
	if !de.Type().IsRegular() || s.fs.IsVirtual(p) {
		return aheadPath{}
	}
	fi, err := de.Info()
	if err != nil || fi.Size() > smallFile {
		return aheadPath{}
	}
	if a, ok := fi.Sys().(*vfs.Attr); ok && a.Nlink > 1 && !s.copyLinks {
		return aheadPath{}
	}
	return aheadPath{path: p, size: fi.Size()}
}

// emit passes one entry (a directory without its contents) to fn, with
// the bytes of af when the file was read ahead.
func (s *wsSource) emit(ctx context.Context, name, p string, fi fs.FileInfo, seen map[uint64]string, bodies bool, af *aheadFile, fn func(*entry, io.Reader) error) error {
	if fi.Mode()&(fs.ModeNamedPipe|fs.ModeSocket|fs.ModeDevice) != 0 {
		return unsupported(s.skip, name, typeName(fi.Mode()))
	}
	e := s.entry(name, fi)
	if a, ok := fi.Sys().(*vfs.Attr); ok && !fi.IsDir() && a.Nlink > 1 && !s.copyLinks {
		if first, ok := seen[a.Ino]; ok {
			e.kind, e.target, e.size = kindHardlink, first, 0
			return fn(e, nil)
		}
		seen[a.Ino] = name
	}
	if e.kind == kindSymlink {
		t, err := s.fs.Readlink(ctx, p)
		if err != nil {
			return err
		}
		e.target = t
		return fn(e, nil)
	}
	if !bodies {
		return fn(e, nil)
	}
	if af != nil {
		if af.err != nil {
			return af.err
		}
		e.xattrs = af.xattrs
		return fn(e, io.LimitReader(bytes.NewReader(af.data), e.size))
	}
	var err error
	if e.xattrs, err = wsXattrs(ctx, s.fs, p); err != nil {
		return err
	}
	if e.kind == kindFile {
		return s.file(ctx, p, e, fn)
	}
	return fn(e, nil)
}

// wsXattrs reads the extended attributes of p (a file or directory).
func wsXattrs(ctx context.Context, f *vfs.FS, p string) (map[string][]byte, error) {
	names, err := f.Listxattr(ctx, p)
	if err != nil || len(names) == 0 {
		return nil, err
	}
	out := make(map[string][]byte, len(names))
	for _, name := range names {
		v, err := f.Getxattr(ctx, p, name)
		if err != nil {
			return nil, err
		}
		out[name] = v
	}
	return out, nil
}

func (s *wsSource) file(ctx context.Context, p string, e *entry, fn func(*entry, io.Reader) error) error {
	f, err := s.fs.Open(ctx, p)
	if err != nil {
		return err
	}
	err = fn(e, io.LimitReader(f, e.size))
	return errors.Join(err, f.Close())
}

// entry describes fi (its Sys is a *vfs.Attr) under name.
func (s *wsSource) entry(name string, fi fs.FileInfo) *entry {
	e := &entry{name: name, mode: modeBits(fi.Mode()), mtime: fi.ModTime(), size: fi.Size()}
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
