package vfs

import (
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
)

// virtErr rewrites a virtual provider's error to name the FS path.
func virtErr(op, name string, err error) error {
	if err == nil {
		return nil
	}
	var pe *fs.PathError
	if errors.As(err, &pe) {
		err = pe.Err
	}
	return &fs.PathError{Op: op, Path: name, Err: err}
}

// VirtualIOFS returns v as a read-only fs.FS (plus ReadDirFS, ReadFileFS
// and StatFS) whose operations use ctx.
func VirtualIOFS(ctx context.Context, v Virtual) fs.FS { return virtualFS{ctx: ctx, v: v} }

type virtualFS struct {
	ctx context.Context
	v   Virtual
}

var (
	_ fs.ReadDirFS  = virtualFS{}
	_ fs.ReadFileFS = virtualFS{}
	_ fs.StatFS     = virtualFS{}
)

func (f virtualFS) check(op, name string) error {
	if !fs.ValidPath(name) {
		return &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	return nil
}

func (f virtualFS) Open(name string) (fs.File, error) {
	if err := f.check("open", name); err != nil {
		return nil, err
	}
	return openVirtual(f.ctx, f.v, name, name)
}

// openVirtual opens rel of v as a read-only file whose Stat names base.
func openVirtual(ctx context.Context, v Virtual, rel, name string) (fs.File, error) {
	fi, err := v.Stat(ctx, rel)
	if err != nil {
		return nil, virtErr("open", name, err)
	}
	fi = namedInfo{FileInfo: fi, name: baseName(name)}
	if fi.IsDir() {
		ents, err := v.ReadDir(ctx, rel)
		if err != nil {
			return nil, virtErr("open", name, err)
		}
		return &virtualDir{fi: fi, ents: ents}, nil
	}
	data, err := v.ReadFile(ctx, rel)
	if err != nil {
		return nil, virtErr("open", name, err)
	}
	return &virtualFile{fi: fi, r: bytes.NewReader(data)}, nil
}

func baseName(name string) string {
	for i := len(name) - 1; i >= 0; i-- {
		if name[i] == '/' {
			return name[i+1:]
		}
	}
	return name
}

func (f virtualFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if err := f.check("readdir", name); err != nil {
		return nil, err
	}
	ents, err := f.v.ReadDir(f.ctx, name)
	return ents, virtErr("readdir", name, err)
}

func (f virtualFS) ReadFile(name string) ([]byte, error) {
	if err := f.check("read", name); err != nil {
		return nil, err
	}
	data, err := f.v.ReadFile(f.ctx, name)
	return data, virtErr("read", name, err)
}

func (f virtualFS) Stat(name string) (fs.FileInfo, error) {
	if err := f.check("stat", name); err != nil {
		return nil, err
	}
	fi, err := f.v.Stat(f.ctx, name)
	if err != nil {
		return nil, virtErr("stat", name, err)
	}
	return namedInfo{FileInfo: fi, name: baseName(name)}, nil
}

// virtualFile is an open virtual file: its bytes as read at open.
type virtualFile struct {
	fi fs.FileInfo
	r  *bytes.Reader
}

func (f *virtualFile) Stat() (fs.FileInfo, error)              { return f.fi, nil }
func (f *virtualFile) Read(p []byte) (int, error)              { return f.r.Read(p) }
func (f *virtualFile) ReadAt(p []byte, off int64) (int, error) { return f.r.ReadAt(p, off) }
func (f *virtualFile) Seek(off int64, whence int) (int64, error) {
	return f.r.Seek(off, whence)
}
func (f *virtualFile) Close() error { return nil }

// virtualDir is an open virtual directory.
type virtualDir struct {
	fi   fs.FileInfo
	ents []fs.DirEntry
	off  int
}

func (d *virtualDir) Stat() (fs.FileInfo, error) { return d.fi, nil }
func (d *virtualDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.fi.Name(), Err: fs.ErrInvalid}
}
func (d *virtualDir) Close() error { return nil }

func (d *virtualDir) ReadDir(n int) ([]fs.DirEntry, error) {
	rest := d.ents[d.off:]
	if n <= 0 {
		d.off = len(d.ents)
		return rest, nil
	}
	if len(rest) == 0 {
		return nil, io.EOF
	}
	rest = rest[:min(n, len(rest))]
	d.off += len(rest)
	return rest, nil
}
