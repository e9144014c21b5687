package fileblob

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"golang.org/x/sys/unix"
)

// leafBufSize is the getdents buffer of a listing worker: a leaf
// directory of a store of a million blobs holds about 15 names of 88
// bytes each, so one call reads it whole (and the next finds the end).
const leafBufSize = 8 << 10

// readLeaf calls fn with the name of each regular file in the leaf
// directory sub of the open shard directory d. It opens the leaf relative
// to d (openat: a third less work in the kernel than resolving the whole
// path again for each of 65,536 leaves) and reads its entries with
// getdents into buf, whose names fn gets without a copy (fn must not keep
// them): no os.File and no DirEntry per leaf or name, since a listing of
// a million blobs is little else.
func readLeaf(d *os.File, sub string, buf []byte, fn func(name []byte)) error {
	fd, err := unix.Openat(int(d.Fd()), sub, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &fs.PathError{Op: "openat", Path: filepath.Join(d.Name(), sub), Err: err}
	}
	defer unix.Close(fd)
	for {
		n, err := unix.Getdents(fd, buf)
		if errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return &fs.PathError{Op: "getdents", Path: filepath.Join(d.Name(), sub), Err: err}
		}
		if n == 0 {
			return nil
		}
		if err := direntNames(fd, buf[:n], fn); err != nil {
			return &fs.PathError{Op: "readdir", Path: filepath.Join(d.Name(), sub), Err: err}
		}
	}
}

// direntNames calls fn with the name of each regular file among the
// linux_dirent64 records of b, read from directory fd. An entry whose
// type the file system does not record (DT_UNKNOWN) is asked with
// fstatat, as os.ReadDir would.
func direntNames(fd int, b []byte, fn func(name []byte)) error {
	const nameOff = 19 // d_ino (8), d_off (8), d_reclen (2), d_type (1)
	for len(b) > 0 {
		if len(b) < nameOff {
			return errors.New("truncated directory entry")
		}
		reclen := int(binary.NativeEndian.Uint16(b[16:18]))
		if reclen < nameOff || reclen > len(b) {
			return fmt.Errorf("directory entry of %d bytes", reclen)
		}
		ino, typ, name := binary.NativeEndian.Uint64(b[0:8]), b[18], b[nameOff:reclen]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		b = b[reclen:]
		if ino == 0 {
			continue // a deleted entry
		}
		regular, err := isRegular(fd, typ, name)
		if err != nil {
			return err
		}
		if regular {
			fn(name)
		}
	}
	return nil
}

// isRegular reports whether the entry name of directory fd, of dirent
// type typ, is a regular file; a file gone meanwhile is not.
func isRegular(fd int, typ byte, name []byte) (bool, error) {
	if typ != unix.DT_UNKNOWN {
		return typ == unix.DT_REG, nil
	}
	var st unix.Stat_t
	err := unix.Fstatat(fd, string(name), &st, unix.AT_SYMLINK_NOFOLLOW)
	if errors.Is(err, unix.ENOENT) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	return st.Mode&unix.S_IFMT == unix.S_IFREG, nil
}
