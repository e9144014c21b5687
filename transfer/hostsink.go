package transfer

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/forkspace/forkspace/vfs"
)

// hostSink writes entries under a host directory through directory
// descriptors: every directory below the root is opened one component at a
// time with O_NOFOLLOW, files are created with O_EXCL|O_NOFOLLOW, and
// attributes are set with AT_SYMLINK_NOFOLLOW or on open descriptors, so a
// symbolic link in the destination is never followed.
type hostSink struct {
	root  int  // descriptor of the destination directory
	fresh bool // whether the destination was created by this transfer
	owner bool // whether to set owners (running as root)
	late  []*entry
	buf   []byte
}

var _ sink = (*hostSink)(nil)

const (
	dirFlags  = unix.O_DIRECTORY | unix.O_NOFOLLOW | unix.O_RDONLY | unix.O_CLOEXEC
	fileFlags = unix.O_WRONLY | unix.O_CREAT | unix.O_EXCL | unix.O_NOFOLLOW | unix.O_CLOEXEC
)

// newHostSink creates (if needed) and opens the destination directory.
// The destination itself is named by the caller, so links on the way to it
// are followed. The attributes of the source root are given to it only
// when this transfer creates it.
func newHostSink(dir string) (*hostSink, error) {
	_, err := os.Stat(dir)
	fresh := errors.Is(err, fs.ErrNotExist)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	fd, err := unix.Open(dir, unix.O_DIRECTORY|unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: dir, Err: err}
	}
	return &hostSink{root: fd, fresh: fresh, owner: os.Geteuid() == 0}, nil
}

func (s *hostSink) close() error { return unix.Close(s.root) }

// openDir opens the directory an entry name denotes (create: making
// missing components), never following a symbolic link. The caller closes
// the descriptor.
func (s *hostSink) openDir(name string, create bool) (int, error) {
	fd, err := unix.Dup(s.root)
	if err != nil || name == "." {
		return fd, err
	}
	for elem := range strings.SplitSeq(name, "/") {
		next, err := unix.Openat(fd, elem, dirFlags, 0)
		if errors.Is(err, unix.ENOENT) && create {
			if err = unix.Mkdirat(fd, elem, 0o755); err == nil || errors.Is(err, unix.EEXIST) {
				next, err = unix.Openat(fd, elem, dirFlags, 0)
			}
		}
		unix.Close(fd)
		if errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
			return -1, fmt.Errorf("%w: %s is not a directory (refusing to follow symbolic links in the destination)", fs.ErrInvalid, elem)
		}
		if err != nil {
			return -1, err
		}
		fd = next
	}
	return fd, nil
}

func (s *hostSink) put(_ context.Context, e *entry, body io.Reader) error {
	if e.name == "." {
		if s.fresh {
			s.late = append(s.late, e)
		}
		return nil
	}
	dir, base := split(e.name)
	pfd, err := s.openDir(dir, true)
	if err != nil {
		return err
	}
	defer unix.Close(pfd)
	if e.kind == kindDir {
		err := unix.Mkdirat(pfd, base, 0o700)
		if errors.Is(err, unix.EEXIST) {
			err = isDirAt(pfd, base)
		}
		if err != nil {
			return err
		}
		s.late = append(s.late, e)
		return nil
	}
	if err := clearAt(pfd, base); err != nil {
		return err
	}
	switch e.kind {
	case kindSymlink:
		if err := unix.Symlinkat(e.target, pfd, base); err != nil {
			return err
		}
	case kindHardlink:
		return s.link(e.target, pfd, base)
	default:
		if err := s.file(pfd, base, e, body); err != nil {
			return err
		}
	}
	return s.times(pfd, base, e)
}

// file creates base in directory pfd and streams body into it, then sets
// owner and mode on the open descriptor.
func (s *hostSink) file(pfd int, base string, e *entry, body io.Reader) error {
	fd, err := unix.Openat(pfd, base, fileFlags, 0o600)
	if err != nil {
		return err
	}
	f := os.NewFile(uintptr(fd), base)
	if s.buf == nil {
		s.buf = make([]byte, bufSize)
	}
	if _, err := io.CopyBuffer(fileWriter{f}, body, s.buf); err != nil {
		return errors.Join(err, f.Close())
	}
	if err := setHostXattrs(fd, e); err != nil {
		return errors.Join(err, f.Close())
	}
	if s.owner {
		_ = f.Chown(e.uid, e.gid) // best effort
	}
	if err := unix.Fchmod(fd, vfs.UnixMode(e.mode)); err != nil {
		return errors.Join(err, f.Close())
	}
	return f.Close()
}

// fileWriter hides *os.File's ReadFrom so CopyBuffer uses its buffer.
type fileWriter struct{ f *os.File }

func (w fileWriter) Write(p []byte) (int, error) { return w.f.Write(p) }

// link makes base in pfd another name for the earlier entry target.
func (s *hostSink) link(target string, pfd int, base string) error {
	tdir, tbase := split(target)
	tfd, err := s.openDir(tdir, false)
	if err != nil {
		return err
	}
	defer unix.Close(tfd)
	return unix.Linkat(tfd, tbase, pfd, base, 0)
}

// times sets the owner (as root, best effort) and times of base in pfd
// without following a link.
func (s *hostSink) times(pfd int, base string, e *entry) error {
	if s.owner {
		_ = unix.Fchownat(pfd, base, e.uid, e.gid, unix.AT_SYMLINK_NOFOLLOW)
	}
	return unix.UtimesNanoAt(pfd, base, timespecs(e), unix.AT_SYMLINK_NOFOLLOW)
}

func timespecs(e *entry) []unix.Timespec {
	ts := []unix.Timespec{{Nsec: unix.UTIME_OMIT}, {Nsec: unix.UTIME_OMIT}}
	if !e.atime.IsZero() {
		ts[0] = unix.NsecToTimespec(e.atime.UnixNano())
	}
	if !e.mtime.IsZero() {
		ts[1] = unix.NsecToTimespec(e.mtime.UnixNano())
	}
	return ts
}

// finish applies directory owners, modes and times, deepest first.
func (s *hostSink) finish(context.Context) error {
	for i := len(s.late) - 1; i >= 0; i-- {
		if err := s.dirAttrs(s.late[i]); err != nil {
			return &fs.PathError{Op: "export", Path: s.late[i].name, Err: err}
		}
	}
	return nil
}

func (s *hostSink) dirAttrs(e *entry) error {
	fd, err := s.openDir(e.name, false)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	if err := setHostXattrs(fd, e); err != nil {
		return err
	}
	if s.owner {
		_ = unix.Fchown(fd, e.uid, e.gid)
	}
	if err := unix.Fchmod(fd, vfs.UnixMode(e.mode)); err != nil {
		return err
	}
	return unix.UtimesNanoAt(fd, ".", timespecs(e), 0)
}

// isDirAt checks that base in dfd is a directory and not a link.
func isDirAt(dfd int, base string) error {
	var st unix.Stat_t
	if err := unix.Fstatat(dfd, base, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return fmt.Errorf("%w: exists and is not a directory", fs.ErrExist)
	}
	return nil
}

// clearAt removes an existing non-directory base in dfd (a link is removed,
// not followed); a directory there is fs.ErrExist.
func clearAt(dfd int, base string) error {
	var st unix.Stat_t
	err := unix.Fstatat(dfd, base, &st, unix.AT_SYMLINK_NOFOLLOW)
	if errors.Is(err, unix.ENOENT) {
		return nil
	}
	if err != nil {
		return err
	}
	if st.Mode&unix.S_IFMT == unix.S_IFDIR {
		return fmt.Errorf("%w: a directory is in the way", fs.ErrExist)
	}
	return unix.Unlinkat(dfd, base, 0)
}
