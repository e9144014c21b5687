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

// put writes e; a regular file's bytes are stored from body first.
func (s *wsSink) put(ctx context.Context, e *entry, body io.Reader) error {
	if e.kind != kindFile {
		return s.place(ctx, e, nil)
	}
	st, err := s.storeFrom(ctx, e, body)
	if err != nil {
		return err
	}
	return s.putStored(ctx, e, st)
}

func (s *wsSink) store(ctx context.Context, data []byte) (*vfs.Stored, error) {
	return s.fs.Store(ctx, data)
}

func (s *wsSink) storeFrom(ctx context.Context, e *entry, body io.Reader) (*vfs.Stored, error) {
	return s.fs.StoreFrom(ctx, s.path(e.name), body)
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

// place writes entry e, a regular file's contents through write (nil for
// other kinds).
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

// smallFile is the size up to which a file is read whole: an import's
// workers store it (larger ones are streamed by the walk), an export reads
// it ahead of the walk.
const smallFile = 256 << 10

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
