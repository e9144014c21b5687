package mount

import (
	"bytes"
	"context"
	"io"
	"io/fs"
)

// VirtualFS returns v as an fs.FS (plus ReadDirFS, ReadFileFS and StatFS)
// whose operations use ctx: the read-only io/fs view of a virtual mount.
func VirtualFS(ctx context.Context, v Virtual) fs.FS { return virtualFS{ctx: ctx, v: v} }

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
	fi, err := f.v.Stat(f.ctx, name)
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		ents, err := f.v.ReadDir(f.ctx, name)
		if err != nil {
			return nil, err
		}
		return &virtualDir{fi: fi, ents: ents}, nil
	}
	data, err := f.v.ReadFile(f.ctx, name)
	if err != nil {
		return nil, err
	}
	return &virtualFile{fi: fi, r: bytes.NewReader(data)}, nil
}

func (f virtualFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if err := f.check("readdir", name); err != nil {
		return nil, err
	}
	return f.v.ReadDir(f.ctx, name)
}

func (f virtualFS) ReadFile(name string) ([]byte, error) {
	if err := f.check("read", name); err != nil {
		return nil, err
	}
	return f.v.ReadFile(f.ctx, name)
}

func (f virtualFS) Stat(name string) (fs.FileInfo, error) {
	if err := f.check("stat", name); err != nil {
		return nil, err
	}
	return f.v.Stat(f.ctx, name)
}

type virtualFile struct {
	fi fs.FileInfo
	r  *bytes.Reader
}

func (f *virtualFile) Stat() (fs.FileInfo, error) { return f.fi, nil }
func (f *virtualFile) Read(p []byte) (int, error) { return f.r.Read(p) }
func (f *virtualFile) Close() error               { return nil }

// ReadAt and Seek serve fstest and readers that need random access.
func (f *virtualFile) ReadAt(p []byte, off int64) (int, error) { return f.r.ReadAt(p, off) }
func (f *virtualFile) Seek(off int64, whence int) (int64, error) {
	return f.r.Seek(off, whence)
}

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
