package vfs

import (
	"context"
	"io/fs"

	"github.com/forkspace/forkspace/content"
	"github.com/forkspace/forkspace/errdefs"
)

// StubAttr is the extended attribute that marks a stub: a regular file
// whose size, mode and times are known but whose bytes are not stored yet
// (its manifest is one hole, which references nothing stored). Reading a
// stub through ReadFile or OpenFile first calls Hooks.Hydrate. Its value
// is the hook's own (the mount root and the path below it).
const StubAttr = "trusted.forkspace.stub"

// Hooks let the layer that owns mounts (package mount) take part in an
// FS's operations. Paths are the FS paths given to the operation, not
// resolved through symbolic links. A stub is hydrated before it is read,
// truncated, opened without O_TRUNC, renamed or linked (so a moved file no
// longer depends on its source path).
type Hooks interface {
	// CheckWrite is called before a mutation of name (op as in the
	// returned *fs.PathError); an error fails the mutation unchanged.
	CheckWrite(op, name string) error
	// Changed is called once a mutation of name is durable.
	Changed(name string)
	// Hydrate is called before the bytes of stub name are read; it
	// replaces the stub with the file's bytes (FillStub). The read then
	// proceeds against whatever name holds.
	Hydrate(ctx context.Context, name string) error
	// Virtual returns the virtual mount serving name and name relative to
	// it ("." for its root), or false. ctx is the operation's context.
	Virtual(ctx context.Context, name string) (v Virtual, rel string, ok bool)
}

// Virtual is a subtree served live by its provider instead of the tree:
// Stat, ReadDir and ReadFile dispatch to it (paths relative to its root).
type Virtual interface {
	Stat(ctx context.Context, rel string) (fs.FileInfo, error)
	ReadDir(ctx context.Context, rel string) ([]fs.DirEntry, error)
	ReadFile(ctx context.Context, rel string) ([]byte, error)
}

// VirtualWriter is a Virtual that accepts WriteFile and Remove (when the
// hooks' CheckWrite allows them).
type VirtualWriter interface {
	Virtual
	WriteFile(ctx context.Context, rel string, data []byte, perm fs.FileMode) error
	Remove(ctx context.Context, rel string) error
}

// SetHooks installs h (nil removes them). Call it before the FS is shared:
// it is not synchronised with operations.
func (f *FS) SetHooks(h Hooks) { f.hooks = h }

// checkWrite asks the hooks whether a mutation of each name may proceed.
func (f *FS) checkWrite(ctx context.Context, op string, names ...string) error {
	if f.hooks == nil {
		return nil
	}
	for _, n := range names {
		if err := f.hooks.CheckWrite(op, n); err != nil {
			return errdefs.PathError(op, n, err)
		}
		if _, _, ok := f.hooks.Virtual(ctx, n); ok {
			return &fs.PathError{Op: op, Path: n, Err: errdefs.ErrReadOnly}
		}
	}
	return nil
}

// changed reports that op's mutations of names are durable: to the hooks
// and the watchers (Watch), or, on a Batch's filesystem, to the batch,
// which reports them once it lands.
func (f *FS) changed(ctx context.Context, op string, names ...string) {
	if f.batch != nil {
		f.batch.mu.Lock()
		f.batch.changed.add(names...)
		f.batch.mu.Unlock()
		return
	}
	for _, n := range names {
		if f.hooks != nil {
			f.hooks.Changed(n)
		}
		f.notify(ctx, Event{Op: op, Name: n})
	}
}

// virtual returns the virtual provider serving name, if any.
func (f *FS) virtual(ctx context.Context, name string) (Virtual, string, bool) {
	if f.hooks == nil {
		return nil, "", false
	}
	return f.hooks.Virtual(ctx, name)
}

// holes reports whether m has bytes but stores none of them (a stub, or a
// file truncated up from empty).
func holes(m content.Manifest) bool {
	if m.Size == 0 || m.Inline {
		return false
	}
	for _, e := range m.Extents {
		if !e.Hash.IsZero() {
			return false
		}
	}
	return true
}

// isStub reports whether inode ino is a stub; the caller holds the lock.
func (t *txn) isStub(ctx context.Context, ino uint64, m content.Manifest) (bool, error) {
	if t.f.hooks == nil || !holes(m) {
		return false, nil
	}
	_, ok, err := t.get(ctx, inoKey(ino, kindXattr, StubAttr))
	return ok, err
}

// dropStub removes inode ino's StubAttr, if any: new contents make a stub
// an ordinary file.
func (t *txn) dropStub(ctx context.Context, ino uint64) error {
	if t.f.hooks == nil {
		return nil
	}
	k := inoKey(ino, kindXattr, StubAttr)
	_, ok, err := t.get(ctx, k)
	if ok {
		t.del(k)
	}
	return err
}

// hydrate fills name if it is a stub, so a read or a partial write sees
// its bytes.
func (f *FS) hydrate(ctx context.Context, op, name string) error {
	if f.hooks == nil {
		return nil
	}
	// Asking Virtual first lets the hooks bring mounts in (their first
	// index) before the tree is read; a virtual path holds no stubs.
	if _, _, ok := f.virtual(ctx, name); ok {
		return nil
	}
	stub := false
	err := f.read(ctx, op, name, func(t *txn) error {
		n, err := t.lookup(ctx, name, true)
		if err != nil || !n.exists() || n.typ != typeFile {
			return nil // the operation itself reports these
		}
		m, err := t.manifest(ctx, n.ino)
		if err != nil {
			return err
		}
		stub, err = t.isStub(ctx, n.ino, m)
		return err
	})
	if err != nil || !stub {
		return err
	}
	return errdefs.PathError(op, name, f.hooks.Hydrate(ctx, name))
}

// changedOn reports name changed by op when *err is nil (deferred by
// operations with a second path).
func (f *FS) changedOn(ctx context.Context, op string, err *error, name string) {
	if *err == nil {
		f.changed(ctx, op, name)
	}
}

// virtualWrite serves WriteFile under a virtual mount: done reports that
// name was virtual.
func (f *FS) virtualWrite(ctx context.Context, op, name string, data []byte, perm fs.FileMode) (done bool, err error) {
	v, rel, ok := f.virtual(ctx, name)
	if !ok {
		return false, nil
	}
	if err := f.hooks.CheckWrite(op, name); err != nil {
		return true, errdefs.PathError(op, name, err)
	}
	w, ok := v.(VirtualWriter)
	if !ok || rel == "." {
		return true, &fs.PathError{Op: op, Path: name, Err: errdefs.ErrReadOnly}
	}
	return true, virtErr(op, name, w.WriteFile(ctx, rel, data, perm))
}

// virtualRemove serves Remove and RemoveAll under a virtual mount.
func (f *FS) virtualRemove(ctx context.Context, op, name string) (done bool, err error) {
	v, rel, ok := f.virtual(ctx, name)
	if !ok {
		return false, nil
	}
	if err := f.hooks.CheckWrite(op, name); err != nil {
		return true, errdefs.PathError(op, name, err)
	}
	w, ok := v.(VirtualWriter)
	if !ok || rel == "." {
		return true, &fs.PathError{Op: op, Path: name, Err: errdefs.ErrReadOnly}
	}
	return true, virtErr(op, name, w.Remove(ctx, rel))
}

// namedInfo renames a virtual provider's fs.FileInfo to the FS path's base
// name.
type namedInfo struct {
	fs.FileInfo
	name string
}

func (i namedInfo) Name() string { return i.name }

// IsVirtual reports whether name lies under a virtual mount (its root
// included): its contents are served live, not stored, and an export
// leaves them out.
func (f *FS) IsVirtual(name string) bool {
	_, _, ok := f.virtual(context.Background(), name)
	return ok
}
