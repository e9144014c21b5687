package transfer

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// hostSource reads a host directory tree without following symbolic links
// below its root.
type hostSource struct {
	root string // resolved host directory
	skip func(string, error) error
}

var (
	_ source  = (*hostSource)(nil)
	_ visitor = (*hostSource)(nil)
)

// devIno identifies a host inode.
type devIno struct{ dev, ino uint64 }

func newHostSource(dir string, skip func(string, error) error) (*hostSource, error) {
	root, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, err
	}
	fi, err := os.Stat(root)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, &fs.PathError{Op: "import", Path: dir, Err: syscall.ENOTDIR}
	}
	return &hostSource{root: root, skip: skip}, nil
}

func (s *hostSource) walk(ctx context.Context, fn func(*entry, io.Reader) error) error {
	return s.visit(ctx, true, fn)
}

func (s *hostSource) visit(ctx context.Context, bodies bool, fn func(*entry, io.Reader) error) error {
	seen := make(map[devIno]string)
	return filepath.WalkDir(s.root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		rel, err := filepath.Rel(s.root, p)
		if err != nil {
			return err
		}
		name := filepath.ToSlash(rel)
		fi, err := d.Info()
		if err != nil {
			return err
		}
		e, err := hostEntry(name, fi)
		if errors.Is(err, errors.ErrUnsupported) {
			return unsupported(s.skip, name, typeName(fi.Mode()))
		}
		if err != nil {
			return err
		}
		st, _ := fi.Sys().(*syscall.Stat_t)
		if st != nil && e.kind != kindDir && st.Nlink > 1 {
			key := devIno{uint64(st.Dev), st.Ino}
			if first, ok := seen[key]; ok {
				e.kind, e.target, e.size = kindHardlink, first, 0
				return fn(e, nil)
			}
			seen[key] = name
		}
		if e.kind == kindSymlink {
			if e.target, err = os.Readlink(p); err != nil {
				return err
			}
			return fn(e, nil)
		}
		if !bodies {
			return fn(e, nil)
		}
		if e.xattrs, err = hostXattrs(p); err != nil {
			return err
		}
		if e.kind == kindFile {
			return s.file(p, e, fn)
		}
		return fn(e, nil)
	})
}

// file opens p without following a link and hands its contents to fn,
// read from the bare descriptor: an *os.File would also make it
// non-blocking, offer it to the poller (which refuses regular files) and
// set a finalizer, for every file of the tree.
func (s *hostSource) file(p string, e *entry, fn func(*entry, io.Reader) error) error {
	fd, err := unix.Open(p, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return &fs.PathError{Op: "open", Path: p, Err: err}
	}
	err = fn(e, io.LimitReader(fdReader{fd: fd, path: p}, e.size))
	if cerr := unix.Close(fd); cerr != nil {
		err = errors.Join(err, &fs.PathError{Op: "close", Path: p, Err: cerr})
	}
	return err
}

// fdReader reads a regular file's descriptor with read(2).
type fdReader struct {
	fd   int
	path string
}

func (r fdReader) Read(b []byte) (int, error) {
	for {
		n, err := unix.Read(r.fd, b)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case err != nil:
			return 0, &fs.PathError{Op: "read", Path: r.path, Err: err}
		case n == 0 && len(b) > 0:
			return 0, io.EOF
		}
		return n, nil
	}
}

// hostEntry describes a host file; device, FIFO and socket files are
// errors.ErrUnsupported.
func hostEntry(name string, fi fs.FileInfo) (*entry, error) {
	e := &entry{name: name, mode: modeBits(fi.Mode()), mtime: fi.ModTime(), size: fi.Size()}
	switch t := fi.Mode().Type(); {
	case t == 0:
		e.kind = kindFile
	case t == fs.ModeDir:
		e.kind, e.size = kindDir, 0
	case t == fs.ModeSymlink:
		e.kind, e.size = kindSymlink, 0
	default:
		return nil, errors.ErrUnsupported
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		e.uid, e.gid = int(st.Uid), int(st.Gid)
		e.atime = time.Unix(st.Atim.Sec, st.Atim.Nsec)
	}
	return e, nil
}
