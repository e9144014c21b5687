package vfs

import (
	"context"
	"errors"
	"io/fs"
	"path"
	"strings"

	"github.com/forkspace/forkspace/errdefs"
)

// IOFS is an FS seen through the io/fs interfaces, whose methods take no
// context: it carries one (Background by default). It may be rooted at a
// subdirectory (Sub). Symbolic links still resolve against the workspace
// root, as in the FS.
type IOFS struct {
	fsys *FS
	ctx  context.Context
	dir  string // "." or a valid path
}

var (
	_ fs.FS         = IOFS{}
	_ fs.ReadDirFS  = IOFS{}
	_ fs.ReadFileFS = IOFS{}
	_ fs.StatFS     = IOFS{}
	_ fs.SubFS      = IOFS{}
	_ fs.ReadLinkFS = IOFS{}
)

// IOFS returns f as an fs.FS (plus ReadDirFS, ReadFileFS, StatFS, SubFS
// and ReadLinkFS) whose operations use ctx; a nil ctx means
// context.Background(). f's own methods with the same names take a context
// first, so they cannot satisfy io/fs directly.
func (f *FS) IOFS(ctx context.Context) IOFS {
	if ctx == nil {
		ctx = context.Background()
	}
	return IOFS{fsys: f, ctx: ctx, dir: "."}
}

// join maps a name of the io/fs view to a path of the FS.
func (v IOFS) join(op, name string) (string, error) {
	if !fs.ValidPath(name) {
		return "", &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	if v.dir == "." {
		return name, nil
	}
	if name == "." {
		return v.dir, nil
	}
	return v.dir + "/" + name, nil
}

// rel rewrites the path of a *fs.PathError back to the view's names.
func (v IOFS) rel(err error) error {
	var pe *fs.PathError
	if v.dir == "." || !errors.As(err, &pe) {
		return err
	}
	p := strings.TrimPrefix(strings.TrimPrefix(pe.Path, v.dir), "/")
	if p == "" {
		p = "."
	}
	return &fs.PathError{Op: pe.Op, Path: p, Err: pe.Err}
}

// Open opens name for reading; the result is a *File (an in-memory file
// under a virtual mount).
func (v IOFS) Open(name string) (fs.File, error) {
	p, err := v.join("open", name)
	if err != nil {
		return nil, err
	}
	if vm, rel, ok := v.fsys.virtual(v.ctx, p); ok {
		fl, err := openVirtual(v.ctx, vm, rel, name)
		return fl, v.rel(err)
	}
	h, err := v.fsys.Open(v.ctx, p)
	if err != nil {
		return nil, v.rel(err)
	}
	if name == "." {
		h.name = "."
	}
	return h, nil
}

// ReadDir is FS.ReadDir.
func (v IOFS) ReadDir(name string) ([]fs.DirEntry, error) {
	p, err := v.join("readdir", name)
	if err != nil {
		return nil, err
	}
	ents, err := v.fsys.ReadDir(v.ctx, p)
	return ents, v.rel(err)
}

// ReadFile is FS.ReadFile.
func (v IOFS) ReadFile(name string) ([]byte, error) {
	p, err := v.join("read", name)
	if err != nil {
		return nil, err
	}
	data, err := v.fsys.ReadFile(v.ctx, p)
	return data, v.rel(err)
}

// Stat is FS.Stat; the root of a Sub view is named ".".
func (v IOFS) Stat(name string) (fs.FileInfo, error) {
	return v.stat(name, v.fsys.Stat)
}

// Lstat is FS.Lstat.
func (v IOFS) Lstat(name string) (fs.FileInfo, error) {
	return v.stat(name, v.fsys.Lstat)
}

func (v IOFS) stat(name string, stat func(context.Context, string) (fs.FileInfo, error)) (fs.FileInfo, error) {
	p, err := v.join("stat", name)
	if err != nil {
		return nil, err
	}
	fi, err := stat(v.ctx, p)
	if err != nil {
		return nil, v.rel(err)
	}
	if name == "." {
		fi.(*fileInfo).name = "."
	}
	return fi, nil
}

// ReadLink is FS.Readlink.
func (v IOFS) ReadLink(name string) (string, error) {
	p, err := v.join("readlink", name)
	if err != nil {
		return "", err
	}
	target, err := v.fsys.Readlink(v.ctx, p)
	return target, v.rel(err)
}

// Sub returns the view rooted at directory dir (fs.ErrNotExist or
// errdefs.ErrNotDir otherwise).
func (v IOFS) Sub(dir string) (fs.FS, error) {
	p, err := v.join("sub", dir)
	if err != nil {
		return nil, err
	}
	fi, err := v.fsys.Stat(v.ctx, p)
	if err != nil {
		return nil, v.rel(err)
	}
	if !fi.IsDir() {
		return nil, &fs.PathError{Op: "sub", Path: dir, Err: errdefs.ErrNotDir}
	}
	return IOFS{fsys: v.fsys, ctx: v.ctx, dir: path.Clean(p)}, nil
}
