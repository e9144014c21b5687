package webdavfs

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"strings"
	"syscall"
	"time"

	"golang.org/x/net/webdav"

	forkspace "github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/auth"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/vfs"
)

// storeFS is the webdav.FileSystem of a store's workspaces (see the
// package documentation for the namespace).
type storeFS struct {
	st *forkspace.Store
}

var _ webdav.FileSystem = storeFS{}

// target is where a WebDAV name lands: a path in a workspace (ws set,
// writable) or in a checkpoint (ws nil, tree read-only).
type target struct {
	ref  string // "NAME" or "NAME@CHECKPOINT"
	ws   *forkspace.Audited
	tree *vfs.FS
	rel  string // the path in the tree ("." for its root)
}

// split parses a name the handler passes ("/", "/NAME", "/NAME/PATH") into
// the workspace reference and the path below it ("" for the root of the
// namespace, "." for the workspace's root).
func split(name string) (ref, rel string) {
	name = strings.Trim(name, "/")
	if name == "" {
		return "", ""
	}
	ref, rel, _ = strings.Cut(name, "/")
	if rel == "" {
		rel = "."
	}
	return ref, rel
}

// readOnlyRef reports whether ref names a checkpoint.
func readOnlyRef(ref string) bool { return strings.Contains(ref, "@") }

// resolve opens the workspace or checkpoint name lands in.
func (s storeFS) resolve(ctx context.Context, name string) (target, error) {
	ref, rel := split(name)
	t := target{ref: ref, rel: rel}
	if readOnlyRef(ref) {
		tree, err := s.st.Snapshot(ctx, ref)
		t.tree = tree
		return t, err
	}
	ws, err := s.st.Audited(ctx, ref, forkspace.AuditOptions{Surface: "webdav"})
	if err != nil {
		return t, err
	}
	t.ws, t.tree = ws, ws.FS
	return t, nil
}

// writable resolves name for a mutation, which a checkpoint refuses.
func (s storeFS) writable(ctx context.Context, op, name string) (target, error) {
	t, err := s.resolve(ctx, name)
	if err == nil && t.ws == nil {
		err = errReadOnly(op, t.ref)
	}
	return t, err
}

func errReadOnly(op, ref string) error {
	return &fs.PathError{Op: op, Path: ref, Err: fmt.Errorf("%w: checkpoint %s is read-only", fs.ErrPermission, ref)}
}

func (s storeFS) Mkdir(ctx context.Context, name string, perm os.FileMode) error {
	ref, rel := split(name)
	switch {
	case ref == "":
		return fail(ctx, &fs.PathError{Op: "mkdir", Path: "/", Err: fs.ErrExist})
	case readOnlyRef(ref):
		return fail(ctx, errReadOnly("mkdir", ref))
	case rel == ".":
		_, err := s.st.Create(ctx, ref, forkspace.CreateOptions{})
		return fail(ctx, err)
	}
	t, err := s.writable(ctx, "mkdir", name)
	if err == nil {
		err = t.ws.Mkdir(ctx, t.rel, perm)
	}
	return fail(ctx, err)
}

func (s storeFS) OpenFile(ctx context.Context, name string, flag int, perm os.FileMode) (webdav.File, error) {
	writes := flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE|os.O_TRUNC|os.O_APPEND) != 0
	ref, _ := split(name)
	if ref == "" {
		if writes {
			return nil, fail(ctx, &fs.PathError{Op: "open", Path: "/", Err: fs.ErrPermission})
		}
		return &rootDir{st: s.st, ctx: ctx}, nil
	}
	if !writes {
		t, err := s.resolve(ctx, name)
		if err != nil {
			return nil, fail(ctx, err)
		}
		f, err := t.tree.OpenFile(ctx, t.rel, vfs.O_RDONLY, 0)
		if err != nil {
			return nil, fail(ctx, err)
		}
		return &readFile{File: f, props: props{ctx: ctx, t: t}, name: nameOf(t)}, nil
	}
	t, err := s.writable(ctx, "open", name)
	if err != nil {
		return nil, fail(ctx, err)
	}
	if flag&os.O_TRUNC != 0 {
		// A whole-file write: PUT, the destination of a COPY, a LOCK
		// creating an empty resource. Its directory must exist now, as
		// the handler answers from OpenFile (409) before it writes.
		if err := dirExists(ctx, t); err != nil {
			return nil, fail(ctx, err)
		}
		return newUpload(ctx, t, perm), nil
	}
	// Opened for writing without truncation: PROPPATCH, which only
	// changes properties.
	fi, err := t.tree.Stat(ctx, t.rel)
	if err != nil {
		return nil, fail(ctx, err)
	}
	return &propFile{props: props{ctx: ctx, t: t}, info: named(fi, nameOf(t))}, nil
}

// dirExists checks that the directory t's entry would be created in
// exists (fs.ErrNotExist otherwise, as for a missing directory).
func dirExists(ctx context.Context, t target) error {
	dir := path.Dir(t.rel)
	fi, err := t.tree.Stat(ctx, dir)
	if err == nil && !fi.IsDir() {
		err = &fs.PathError{Op: "open", Path: dir, Err: fs.ErrNotExist}
	}
	return err
}

func (s storeFS) RemoveAll(ctx context.Context, name string) error {
	ref, rel := split(name)
	if ref == "" || rel == "." {
		return fail(ctx, &fs.PathError{Op: "delete", Path: name, Err: fmt.Errorf("%w: workspaces are deleted with the CLI, the API or the tools, not through WebDAV", fs.ErrPermission)})
	}
	t, err := s.writable(ctx, "delete", name)
	if err == nil {
		err = t.ws.RemoveAll(ctx, t.rel)
	}
	return fail(ctx, err)
}

func (s storeFS) Rename(ctx context.Context, oldName, newName string) error {
	oldRef, oldRel := split(oldName)
	newRef, newRel := split(newName)
	switch {
	case oldRef == "" || newRef == "" || oldRel == "." || newRel == ".":
		return fail(ctx, &fs.PathError{Op: "move", Path: oldName, Err: fmt.Errorf("%w: workspaces are renamed with the CLI, not through WebDAV", fs.ErrPermission)})
	case oldRef != newRef:
		return fail(ctx, &fs.PathError{Op: "move", Path: oldName, Err: fmt.Errorf("%w: %s and %s are different workspaces (copy, then delete)", syscall.EXDEV, oldRef, newRef)})
	}
	t, err := s.writable(ctx, "move", oldName)
	if err == nil {
		err = t.ws.Rename(ctx, t.rel, newRel)
	}
	return fail(ctx, err)
}

func (s storeFS) Stat(ctx context.Context, name string) (os.FileInfo, error) {
	ref, _ := split(name)
	if ref == "" {
		return rootInfo{}, nil
	}
	t, err := s.resolve(ctx, name)
	if err != nil {
		return nil, fail(ctx, err)
	}
	fi, err := t.tree.Stat(ctx, t.rel)
	if err != nil {
		return nil, fail(ctx, err)
	}
	return named(fi, nameOf(t)), nil
}

// nameOf is the base name a target's entry is listed under.
func nameOf(t target) string {
	if t.rel == "." {
		return t.ref
	}
	return t.rel[strings.LastIndexByte(t.rel, '/')+1:]
}

// named is fi under another name (a workspace's root is "." in its tree
// but NAME in the namespace).
func named(fi fs.FileInfo, name string) fs.FileInfo {
	if fi.Name() == name {
		return fi
	}
	return namedInfo{FileInfo: fi, name: name}
}

type namedInfo struct {
	fs.FileInfo
	name string
}

func (n namedInfo) Name() string { return n.name }

// rootInfo describes the namespace's root collection.
type rootInfo struct{}

func (rootInfo) Name() string       { return "/" }
func (rootInfo) Size() int64        { return 0 }
func (rootInfo) Mode() fs.FileMode  { return fs.ModeDir | 0o555 }
func (rootInfo) ModTime() time.Time { return time.Time{} }
func (rootInfo) IsDir() bool        { return true }
func (rootInfo) Sys() any           { return nil }

// rootDir is the namespace's root opened for listing: one collection per
// workspace (checkpoints are reachable, not listed).
type rootDir struct {
	st   *forkspace.Store
	ctx  context.Context
	list []fs.FileInfo // nil until the first Readdir
	done bool
}

func (d *rootDir) Readdir(count int) ([]fs.FileInfo, error) {
	if !d.done {
		infos, err := d.st.List(d.ctx)
		if err != nil {
			return nil, fail(d.ctx, err)
		}
		for _, in := range infos {
			if auth.Allowed(d.ctx, auth.Read, forkspace.TenantFrom(d.ctx), in.Name) != nil {
				continue // a token sees only what it reaches
			}
			d.list = append(d.list, wsInfo{name: in.Name, updated: in.UpdatedAt})
		}
		d.done = true
	}
	if count <= 0 {
		out := d.list
		d.list = nil
		return out, nil
	}
	if len(d.list) == 0 {
		return nil, io.EOF
	}
	n := min(count, len(d.list))
	out := d.list[:n]
	d.list = d.list[n:]
	return out, nil
}

func (d *rootDir) Stat() (fs.FileInfo, error) { return rootInfo{}, nil }
func (d *rootDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: "/", Err: errdefs.ErrIsDir}
}
func (d *rootDir) Seek(int64, int) (int64, error) { return 0, nil }
func (d *rootDir) Write([]byte) (int, error) {
	return 0, &fs.PathError{Op: "write", Path: "/", Err: fs.ErrPermission}
}
func (d *rootDir) Close() error { return nil }

// wsInfo lists a workspace in the root collection.
type wsInfo struct {
	name    string
	updated time.Time
}

func (w wsInfo) Name() string       { return w.name }
func (w wsInfo) Size() int64        { return 0 }
func (w wsInfo) Mode() fs.FileMode  { return fs.ModeDir | 0o755 }
func (w wsInfo) ModTime() time.Time { return w.updated }
func (w wsInfo) IsDir() bool        { return true }
func (w wsInfo) Sys() any           { return nil }
