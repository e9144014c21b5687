package memmount

import (
	"context"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/mount"
)

// FS is an in-memory file set mounted as a virtual mount.
type FS struct {
	mu    sync.RWMutex
	files map[string]file
	mtime time.Time
}

type file struct {
	data  []byte
	perm  fs.FileMode
	mtime time.Time
}

var (
	_ mount.Virtual       = (*FS)(nil)
	_ mount.VirtualWriter = (*FS)(nil)
)

// New returns a file set holding a copy of files (slash-separated paths
// relative to the mount root, mode 0644). An invalid path panics: files are
// a program's constants.
func New(files map[string][]byte) *FS {
	m := &FS{files: make(map[string]file, len(files)), mtime: time.Now()}
	for p, data := range files {
		if !fs.ValidPath(p) || p == "." {
			panic("memmount: invalid path " + p)
		}
		m.files[p] = file{data: slices.Clone(data), perm: 0o644, mtime: m.mtime}
	}
	return m
}

// Kind returns "memory".
func (m *FS) Kind() string { return "memory" }

func pathErr(op, rel string, err error) error { return &fs.PathError{Op: op, Path: rel, Err: err} }

// isDir reports whether rel is "." or a proper prefix of a file path; the
// caller holds mu.
func (m *FS) isDir(rel string) bool {
	if rel == "." {
		return true
	}
	for p := range m.files {
		if strings.HasPrefix(p, rel+"/") {
			return true
		}
	}
	return false
}

// Stat describes rel; a missing path is fs.ErrNotExist.
func (m *FS) Stat(_ context.Context, rel string) (fs.FileInfo, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if f, ok := m.files[rel]; ok {
		return info{name: base(rel), size: int64(len(f.data)), mode: f.perm, mtime: f.mtime}, nil
	}
	if m.isDir(rel) {
		return info{name: base(rel), mode: fs.ModeDir | 0o755, mtime: m.mtime}, nil
	}
	return nil, pathErr("stat", rel, fs.ErrNotExist)
}

// ReadDir lists directory rel sorted by name; a file is errdefs.ErrNotDir.
func (m *FS) ReadDir(_ context.Context, rel string) ([]fs.DirEntry, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if _, ok := m.files[rel]; ok {
		return nil, pathErr("readdir", rel, errdefs.ErrNotDir)
	}
	if !m.isDir(rel) {
		return nil, pathErr("readdir", rel, fs.ErrNotExist)
	}
	prefix := rel + "/"
	if rel == "." {
		prefix = ""
	}
	seen := map[string]fs.DirEntry{}
	for p, f := range m.files {
		rest, ok := strings.CutPrefix(p, prefix)
		if !ok {
			continue
		}
		name, _, sub := strings.Cut(rest, "/")
		if sub {
			seen[name] = fs.FileInfoToDirEntry(info{name: name, mode: fs.ModeDir | 0o755, mtime: m.mtime})
		} else {
			seen[name] = fs.FileInfoToDirEntry(info{name: name, size: int64(len(f.data)), mode: f.perm, mtime: f.mtime})
		}
	}
	out := slices.Collect(maps.Values(seen))
	slices.SortFunc(out, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return out, nil
}

// ReadFile returns a copy of file rel; a directory is errdefs.ErrIsDir.
func (m *FS) ReadFile(_ context.Context, rel string) ([]byte, error) {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if f, ok := m.files[rel]; ok {
		return slices.Clone(f.data), nil
	}
	if m.isDir(rel) {
		return nil, pathErr("read", rel, errdefs.ErrIsDir)
	}
	return nil, pathErr("read", rel, fs.ErrNotExist)
}

// WriteFile stores a copy of data at rel (parents are implied). Writing
// over a directory is errdefs.ErrIsDir, below a file errdefs.ErrNotDir.
func (m *FS) WriteFile(_ context.Context, rel string, data []byte, perm fs.FileMode) error {
	if !fs.ValidPath(rel) || rel == "." {
		return pathErr("write", rel, fs.ErrInvalid)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.isDir(rel) {
		return pathErr("write", rel, errdefs.ErrIsDir)
	}
	for d := rel; d != "."; {
		d = dir(d)
		if _, ok := m.files[d]; ok {
			return pathErr("write", rel, errdefs.ErrNotDir)
		}
	}
	m.files[rel] = file{data: slices.Clone(data), perm: perm.Perm(), mtime: time.Now()}
	return nil
}

// Remove deletes file rel; a missing file is fs.ErrNotExist and a
// directory (implied by its files) errdefs.ErrIsDir.
func (m *FS) Remove(_ context.Context, rel string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.files[rel]; !ok {
		if m.isDir(rel) {
			return pathErr("remove", rel, errdefs.ErrIsDir)
		}
		return pathErr("remove", rel, fs.ErrNotExist)
	}
	delete(m.files, rel)
	return nil
}

func base(rel string) string {
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		return rel[i+1:]
	}
	return rel
}

func dir(rel string) string {
	if i := strings.LastIndexByte(rel, '/'); i >= 0 {
		return rel[:i]
	}
	return "."
}

// info is a virtual file's fs.FileInfo.
type info struct {
	name  string
	size  int64
	mode  fs.FileMode
	mtime time.Time
}

func (i info) Name() string       { return i.name }
func (i info) Size() int64        { return i.size }
func (i info) Mode() fs.FileMode  { return i.mode }
func (i info) ModTime() time.Time { return i.mtime }
func (i info) IsDir() bool        { return i.mode.IsDir() }
func (i info) Sys() any           { return nil }
