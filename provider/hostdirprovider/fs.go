package hostdirprovider

import (
	"context"
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/forkspace/forkspace/provider"
)

// FS is the file module of a host directory, confined by an os.Root. Errors
// are those of package os (*fs.PathError with io/fs sentinels).
type FS struct{ root *os.Root }

var _ provider.FS = (*FS)(nil)

// Stat implements provider.FS.
func (f *FS) Stat(_ context.Context, name string) (fs.FileInfo, error) { return f.root.Stat(name) }

// Lstat implements provider.FS.
func (f *FS) Lstat(_ context.Context, name string) (fs.FileInfo, error) { return f.root.Lstat(name) }

// ReadDir implements provider.FS: entries sorted by name.
func (f *FS) ReadDir(_ context.Context, name string) ([]fs.DirEntry, error) {
	d, err := f.root.Open(name)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	entries, err := d.ReadDir(-1)
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, err
}

// ReadFile implements provider.FS.
func (f *FS) ReadFile(_ context.Context, name string) ([]byte, error) { return f.root.ReadFile(name) }

// WriteFile implements provider.FS.
func (f *FS) WriteFile(_ context.Context, name string, data []byte, perm fs.FileMode) error {
	return f.root.WriteFile(name, data, perm)
}

// Mkdir implements provider.FS.
func (f *FS) Mkdir(_ context.Context, name string, perm fs.FileMode) error {
	return f.root.Mkdir(name, perm)
}

// MkdirAll implements provider.FS.
func (f *FS) MkdirAll(_ context.Context, name string, perm fs.FileMode) error {
	return f.root.MkdirAll(name, perm)
}

// Remove implements provider.FS.
func (f *FS) Remove(_ context.Context, name string) error { return f.root.Remove(name) }

// RemoveAll implements provider.FS.
func (f *FS) RemoveAll(_ context.Context, name string) error { return f.root.RemoveAll(name) }

// Rename implements provider.FS.
func (f *FS) Rename(_ context.Context, oldname, newname string) error {
	return f.root.Rename(oldname, newname)
}
