package hostmount

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path"
	"strconv"
	"syscall"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/mount"
)

// Dir is a host directory mounted lazily.
type Dir struct {
	root *os.Root
}

var (
	_ mount.Lazy     = (*Dir)(nil)
	_ mount.Writable = (*Dir)(nil)
)

// New opens dir; a missing directory is fs.ErrNotExist.
func New(dir string) (*Dir, error) {
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("open host mount: %w", err)
	}
	return &Dir{root: r}, nil
}

// Kind returns "hostdir".
func (d *Dir) Kind() string { return "hostdir" }

// Close releases the directory handle.
func (d *Dir) Close() error { return d.root.Close() }

func version(fi fs.FileInfo) string {
	return strconv.FormatInt(fi.Size(), 10) + "-" + strconv.FormatInt(fi.ModTime().UnixNano(), 10)
}

// linked reports a regular file with more than one hard link.
func linked(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && fi.Mode().IsRegular() && st.Nlink > 1
}

// List walks the directory: regular files and symbolic links (with their
// targets); files with several hard links and special files are left out.
func (d *Dir) List(ctx context.Context) ([]mount.Entry, error) {
	var out []mount.Entry
	err := fs.WalkDir(d.root.FS(), ".", func(p string, de fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if de.IsDir() {
			return nil
		}
		fi, err := d.root.Lstat(p)
		if err != nil {
			return err
		}
		e := mount.Entry{Path: p, Size: fi.Size(), Mode: fi.Mode() & (fs.ModePerm | fs.ModeSymlink), ModTime: fi.ModTime(), Version: version(fi)}
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			if e.Target, err = d.root.Readlink(p); err != nil {
				return err
			}
			e.Size = int64(len(e.Target))
		case !fi.Mode().IsRegular() || linked(fi):
			return nil
		}
		out = append(out, e)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list host mount: %w", err)
	}
	return out, nil
}

// Fetch reads file rel inside the directory. An escape (by "..", a
// symbolic link or a hard link) fails with fs.ErrPermission or the
// os.Root error; a missing file is fs.ErrNotExist.
func (d *Dir) Fetch(ctx context.Context, rel string) ([]byte, error) {
	f, err := d.root.Open(rel)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", rel, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", rel, err)
	}
	switch {
	case fi.IsDir():
		return nil, &fs.PathError{Op: "fetch", Path: rel, Err: errdefs.ErrIsDir}
	case linked(fi):
		return nil, &fs.PathError{Op: "fetch", Path: rel, Err: fmt.Errorf("%w: file has several hard links", fs.ErrPermission)}
	}
	data := make([]byte, fi.Size())
	if _, err := f.ReadAt(data, 0); err != nil && fi.Size() > 0 {
		return nil, fmt.Errorf("fetch %s: %w", rel, err)
	}
	return data, nil
}

// Put writes rel (creating parents) through a temporary file renamed over
// it. An ifVersion that differs from the current file's version (a file
// that is gone, or for "" one that exists) is errdefs.ErrConflict.
func (d *Dir) Put(ctx context.Context, rel string, data []byte, ifVersion string) (string, error) {
	if err := d.check("put", rel, ifVersion); err != nil {
		return "", err
	}
	if dir := path.Dir(rel); dir != "." {
		if err := d.root.MkdirAll(dir, 0o755); err != nil {
			return "", fmt.Errorf("put %s: %w", rel, err)
		}
	}
	tmp := path.Join(path.Dir(rel), ".forkspace-put-"+path.Base(rel))
	if err := d.root.WriteFile(tmp, data, 0o644); err != nil {
		return "", fmt.Errorf("put %s: %w", rel, err)
	}
	if err := d.root.Rename(tmp, rel); err != nil {
		return "", errors.Join(fmt.Errorf("put %s: %w", rel, err), d.root.Remove(tmp))
	}
	fi, err := d.root.Lstat(rel)
	if err != nil {
		return "", fmt.Errorf("put %s: %w", rel, err)
	}
	return version(fi), nil
}

// check tests the precondition ifVersion against file rel (see
// mount.Writable).
func (d *Dir) check(op, rel, ifVersion string) error {
	if ifVersion == mount.Unconditional {
		return nil
	}
	fi, err := d.root.Lstat(rel)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%s %s: %w", op, rel, err)
	}
	exists := err == nil
	if exists && version(fi) != ifVersion || !exists && ifVersion != "" {
		return &fs.PathError{Op: op, Path: rel, Err: errdefs.ErrConflict}
	}
	return nil
}

// Delete removes file rel; a missing file is not an error. A file whose
// version differs from ifVersion (unless "" or Unconditional) is
// errdefs.ErrConflict.
func (d *Dir) Delete(ctx context.Context, rel, ifVersion string) error {
	if ifVersion != "" {
		if err := d.check("delete", rel, ifVersion); err != nil && !errors.Is(err, errdefs.ErrConflict) {
			return err
		} else if err != nil {
			if _, serr := d.root.Lstat(rel); errors.Is(serr, fs.ErrNotExist) {
				return nil // gone already
			}
			return err
		}
	}
	if err := d.root.Remove(rel); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("delete %s: %w", rel, err)
	}
	return nil
}

// Driver parses "file:///abs/dir" (the directory must exist).
func Driver(u *url.URL, _ mount.Options) (mount.Mount, error) {
	if u.Host != "" && u.Host != "localhost" || !path.IsAbs(u.Path) {
		return nil, fmt.Errorf("host mount url: %w: want file:///absolute/dir", fs.ErrInvalid)
	}
	return New(u.Path)
}
