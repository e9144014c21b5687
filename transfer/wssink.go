package transfer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/vfs"
)

// wsSink writes entries under a directory of a workspace.
type wsSink struct {
	fs   *vfs.FS
	root string          // target directory (a vfs path)
	dirs map[string]bool // workspace paths verified to be real directories
	// late are directory entries whose attributes are applied by finish.
	late []*entry
	buf  []byte
}

var _ storer = (*wsSink)(nil)

// newWSSink creates (if needed) and checks the target directory. The
// target itself is named by the caller, so links on the way to it are
// followed; below it nothing is.
func newWSSink(ctx context.Context, dst *vfs.FS, dstPath string) (*wsSink, error) {
	root, err := vfs.CleanPath(dstPath)
	if err != nil {
		return nil, err
	}
	if err := dst.MkdirAll(ctx, root, 0o755); err != nil {
		return nil, err
	}
	fi, err := dst.Stat(ctx, root)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return nil, &fs.PathError{Op: "import", Path: root, Err: errdefs.ErrNotDir}
	}
	return &wsSink{fs: dst, root: root, dirs: map[string]bool{root: true}}, nil
}

// path maps an entry name to a workspace path.
func (s *wsSink) path(name string) string {
	switch {
	case name == ".":
		return s.root
	case s.root == ".":
		return name
	}
	return s.root + "/" + name
}

func (s *wsSink) put(ctx context.Context, e *entry, body io.Reader) error {
	return s.place(ctx, e, func(p string) error { return s.file(ctx, p, e, body) })
}

func (s *wsSink) store(ctx context.Context, data []byte) (*vfs.Stored, error) {
	return s.fs.Store(ctx, data)
}

func (s *wsSink) putStored(ctx context.Context, e *entry, st *vfs.Stored) error {
	taken := false
	err := s.place(ctx, e, func(p string) error {
		taken = true
		return s.fs.WriteStored(ctx, p, st, e.mode)
	})
	if !taken {
		s.discard(ctx, st)
	}
	return err
}

// discard gives up st; a failure to release its intents only delays the
// collection of its chunks.
func (s *wsSink) discard(ctx context.Context, st *vfs.Stored) { _ = s.fs.Discard(ctx, st) }

// place writes entry e, a regular file's contents through write.
func (s *wsSink) place(ctx context.Context, e *entry, write func(p string) error) error {
	p := s.path(e.name)
	if e.name != "." {
		dir, _ := split(e.name)
		if err := s.ensureDir(ctx, dir); err != nil {
			return err
		}
	}
	if e.kind == kindDir {
		return s.dir(ctx, e, p)
	}
	if err := s.clear(ctx, p); err != nil {
		return err
	}
	switch e.kind {
	case kindSymlink:
		return s.fs.Symlink(ctx, e.target, p)
	case kindHardlink:
		return s.fs.Link(ctx, s.path(e.target), p)
	}
	if err := write(p); err != nil {
		return err
	}
	return s.attrs(ctx, p, e)
}

// dir creates or reuses directory p and queues its attributes.
func (s *wsSink) dir(ctx context.Context, e *entry, p string) error {
	if !s.dirs[p] {
		err := s.fs.Mkdir(ctx, p, e.mode)
		if errors.Is(err, fs.ErrExist) {
			err = s.isDir(ctx, p)
		}
		if err != nil {
			return err
		}
		s.dirs[p] = true
	}
	s.late = append(s.late, e)
	return nil
}

// ensureDir makes sure the entry directory name and its parents are real
// directories, creating missing ones; a symbolic link or file in the way is
// an error, so nothing is ever written through a link.
func (s *wsSink) ensureDir(ctx context.Context, name string) error {
	p := s.path(name)
	if s.dirs[p] {
		return nil
	}
	parent, _ := split(name)
	if err := s.ensureDir(ctx, parent); err != nil {
		return err
	}
	err := s.fs.Mkdir(ctx, p, 0o755)
	if errors.Is(err, fs.ErrExist) {
		err = s.isDir(ctx, p)
	}
	if err != nil {
		return err
	}
	s.dirs[p] = true
	return nil
}

// isDir checks that existing p is a directory and not a link to one.
func (s *wsSink) isDir(ctx context.Context, p string) error {
	fi, err := s.fs.Lstat(ctx, p)
	if err != nil {
		return err
	}
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return &fs.PathError{Op: "import", Path: p, Err: fmt.Errorf("%w: refusing to write through a symbolic link", fs.ErrInvalid)}
	case !fi.IsDir():
		return &fs.PathError{Op: "import", Path: p, Err: fmt.Errorf("%w: exists and is not a directory", fs.ErrExist)}
	}
	return nil
}

// clear removes an existing non-directory at p so a new entry can take its
// place; a directory there is fs.ErrExist.
func (s *wsSink) clear(ctx context.Context, p string) error {
	fi, err := s.fs.Lstat(ctx, p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.IsDir() {
		return &fs.PathError{Op: "import", Path: p, Err: fmt.Errorf("%w: a directory is in the way", fs.ErrExist)}
	}
	return s.fs.Remove(ctx, p)
}

// smallFile is the size up to which a file is read whole and written in
// one mutation (WriteFile) instead of streamed through a handle.
const smallFile = 256 << 10

// file creates p with body's contents: small files in one mutation,
// larger ones streamed through a handle opened with O_EXCL. A body shorter
// than e.size (a host file that shrank) writes what there is.
func (s *wsSink) file(ctx context.Context, p string, e *entry, body io.Reader) error {
	if s.buf == nil {
		s.buf = make([]byte, bufSize)
	}
	if e.size <= smallFile {
		n, err := io.ReadFull(body, s.buf[:e.size])
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
			return err
		}
		return s.fs.WriteFile(ctx, p, s.buf[:n], e.mode)
	}
	f, err := s.fs.OpenFile(ctx, p, vfs.O_WRONLY|vfs.O_CREATE|vfs.O_EXCL, e.mode)
	if err != nil {
		return err
	}
	if _, err := io.CopyBuffer(f, body, s.buf); err != nil {
		return errors.Join(err, f.Close())
	}
	return f.Close()
}

// attrs sets the extended attributes, owner and times of p (a file or
// directory; a workspace cannot set them on a symbolic link itself).
func (s *wsSink) attrs(ctx context.Context, p string, e *entry) error {
	for name, v := range e.xattrs {
		if err := s.fs.Setxattr(ctx, p, name, v); err != nil {
			return err
		}
	}
	if e.uid != 0 || e.gid != 0 {
		if err := s.fs.Chown(ctx, p, e.uid, e.gid); err != nil {
			return err
		}
	}
	return s.fs.Chtimes(ctx, p, e.atime, e.mtime)
}

// finish applies directory modes, owners and times, deepest first, now
// that their contents no longer change them.
func (s *wsSink) finish(ctx context.Context) error {
	for i := len(s.late) - 1; i >= 0; i-- {
		e := s.late[i]
		p := s.path(e.name)
		if err := s.fs.Chmod(ctx, p, e.mode); err != nil {
			return err
		}
		if err := s.attrs(ctx, p, e); err != nil {
			return err
		}
	}
	return nil
}

func (s *wsSink) close() error { return nil }
