package fusefs

import (
	"context"
	"io"
	"io/fs"
	"sync"

	"github.com/forkspace/forkspace/vfs"
)

// file is what a handle needs of an open file: a *vfs.File, or a
// virtualFile for a path a virtual mount serves.
type file interface {
	io.ReaderAt
	io.WriterAt
	io.Writer
	Truncate(size int64) error
	Flush() error
	Stage() error
	Sync() error
	Close() error
	Stat() (fs.FileInfo, error)
	Poisoned() bool
	Rebase() error
}

var _ file = (*vfs.File)(nil)

// virtualFile is an open file of a virtual mount (vfs has no handles
// there): its bytes are read whole at open (a device gives one buffer
// per open), writes are buffered and written whole by Sync.
type virtualFile struct {
	ctx  context.Context
	fs   *vfs.FS
	name string
	perm fs.FileMode

	mu    sync.Mutex
	data  []byte
	dirty bool
}

// openVirtual opens virtual path p; O_TRUNC starts empty.
func openVirtual(ctx context.Context, fsys *vfs.FS, p string, flags int) (*virtualFile, error) {
	fi, err := fsys.Stat(ctx, p)
	if err != nil {
		return nil, err
	}
	v := &virtualFile{ctx: ctx, fs: fsys, name: p, perm: fi.Mode().Perm()}
	if flags&vfs.O_TRUNC != 0 {
		v.dirty = true
		return v, nil
	}
	if v.data, err = fsys.ReadFile(ctx, p); err != nil {
		return nil, err
	}
	return v, nil
}

func (v *virtualFile) ReadAt(p []byte, off int64) (int, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if off >= int64(len(v.data)) {
		return 0, io.EOF
	}
	return copy(p, v.data[off:]), nil
}

func (v *virtualFile) WriteAt(p []byte, off int64) (int, error) {
	v.mu.Lock()
	defer v.mu.Unlock()
	if end := off + int64(len(p)); end > int64(len(v.data)) {
		v.data = append(v.data, make([]byte, end-int64(len(v.data)))...)
	}
	v.dirty = true
	return copy(v.data[off:], p), nil
}

func (v *virtualFile) Write(p []byte) (int, error) {
	v.mu.Lock()
	off := int64(len(v.data))
	v.mu.Unlock()
	return v.WriteAt(p, off)
}

func (v *virtualFile) Truncate(size int64) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if size < int64(len(v.data)) {
		v.data = v.data[:size]
	} else {
		v.data = append(v.data, make([]byte, size-int64(len(v.data)))...)
	}
	v.dirty = true
	return nil
}

// Sync writes the buffered contents whole (the mount decides whether
// it may: errdefs.ErrReadOnly otherwise).
func (v *virtualFile) Sync() error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if !v.dirty {
		return nil
	}
	if err := v.fs.WriteFile(v.ctx, v.name, v.data, v.perm); err != nil {
		return err
	}
	v.dirty = false
	return nil
}

// Flush is Sync: the virtual mount's write is its only commit.
func (v *virtualFile) Flush() error { return v.Sync() }

// Stage is Sync too.
func (v *virtualFile) Stage() error { return v.Sync() }

func (v *virtualFile) Close() error { return nil }

func (v *virtualFile) Stat() (fs.FileInfo, error) { return v.fs.Stat(v.ctx, v.name) }

// Poisoned is false: a virtual file's writes do not fail, and a failed
// Sync keeps them for a retry.
func (v *virtualFile) Poisoned() bool { return false }

// Rebase has nothing to do: a virtual file's buffer is written whole.
func (v *virtualFile) Rebase() error { return nil }

// truncateVirtual resizes virtual file p (open(O_TRUNC) without a handle).
func truncateVirtual(ctx context.Context, fsys *vfs.FS, p string, size int64) error {
	flags := vfs.O_RDWR
	if size == 0 {
		flags |= vfs.O_TRUNC
	}
	v, err := openVirtual(ctx, fsys, p, flags)
	if err != nil {
		return err
	}
	if err := v.Truncate(size); err != nil {
		return err
	}
	return v.Sync()
}
