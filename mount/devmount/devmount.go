package devmount

import (
	"context"
	"crypto/rand"
	"io/fs"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/mount"
)

// ReadSize is how many bytes a whole-file read of zero, random or urandom
// returns.
const ReadSize = 4096

// Devices are the device names, sorted.
var Devices = []string{"null", "random", "urandom", "zero"}

// Dev is the device set.
type Dev struct{ start time.Time }

var _ mount.VirtualWriter = (*Dev)(nil)

// New returns the device set.
func New() *Dev { return &Dev{start: time.Now()} }

// Kind returns "dev".
func (d *Dev) Kind() string { return "dev" }

func pathErr(op, rel string, err error) error { return &fs.PathError{Op: op, Path: rel, Err: err} }

// Stat describes "." (a directory) or a device (a character device of
// size 0).
func (d *Dev) Stat(_ context.Context, rel string) (fs.FileInfo, error) {
	if rel == "." {
		return info{name: ".", mode: fs.ModeDir | 0o755, t: d.start}, nil
	}
	if !slices.Contains(Devices, rel) {
		return nil, pathErr("stat", rel, fs.ErrNotExist)
	}
	return info{name: rel, mode: fs.ModeDevice | fs.ModeCharDevice | 0o666, t: d.start}, nil
}

// ReadDir lists the devices; anything but "." is errdefs.ErrNotDir or
// fs.ErrNotExist.
func (d *Dev) ReadDir(ctx context.Context, rel string) ([]fs.DirEntry, error) {
	if rel != "." {
		if _, err := d.Stat(ctx, rel); err != nil {
			return nil, pathErr("readdir", rel, fs.ErrNotExist)
		}
		return nil, pathErr("readdir", rel, errdefs.ErrNotDir)
	}
	out := make([]fs.DirEntry, 0, len(Devices))
	for _, n := range Devices {
		fi, _ := d.Stat(ctx, n)
		out = append(out, fs.FileInfoToDirEntry(fi))
	}
	return out, nil
}

// ReadFile returns no bytes for null, ReadSize zeros for zero and ReadSize
// random bytes for random and urandom.
func (d *Dev) ReadFile(_ context.Context, rel string) ([]byte, error) {
	switch rel {
	case "null":
		return []byte{}, nil
	case "zero":
		return make([]byte, ReadSize), nil
	case "random", "urandom":
		b := make([]byte, ReadSize)
		rand.Read(b)
		return b, nil
	case ".":
		return nil, pathErr("read", rel, errdefs.ErrIsDir)
	}
	return nil, pathErr("read", rel, fs.ErrNotExist)
}

// WriteFile discards data written to a device.
func (d *Dev) WriteFile(ctx context.Context, rel string, _ []byte, _ fs.FileMode) error {
	if strings.Contains(rel, "/") || !slices.Contains(Devices, rel) {
		return pathErr("write", rel, fs.ErrPermission)
	}
	return nil
}

// Remove always fails with fs.ErrPermission: devices cannot be removed.
func (d *Dev) Remove(_ context.Context, rel string) error {
	return pathErr("remove", rel, fs.ErrPermission)
}

type info struct {
	name string
	mode fs.FileMode
	t    time.Time
}

func (i info) Name() string       { return i.name }
func (i info) Size() int64        { return 0 }
func (i info) Mode() fs.FileMode  { return i.mode }
func (i info) ModTime() time.Time { return i.t }
func (i info) IsDir() bool        { return i.mode.IsDir() }
func (i info) Sys() any           { return nil }

// Driver parses "dev:" (the device set; the URL carries nothing else).
func Driver(*url.URL, mount.Options) (mount.Mount, error) { return New(), nil }
