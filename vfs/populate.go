package vfs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"time"

	"github.com/forkspace/forkspace/content"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/meta"
)

// Item is one entry Populate writes.
type Item struct {
	// Path is relative to Populate's directory ("a/b.txt").
	Path string
	// Mode holds the type (fs.ModeDir, fs.ModeSymlink or none for a
	// regular file) and the permission bits.
	Mode    fs.FileMode
	ModTime time.Time
	// Data is a regular file's bytes, unless Stub.
	Data []byte
	// Stub makes a regular file of Size bytes whose bytes are not stored
	// (one hole): reading it calls Hooks.Hydrate.
	Stub bool
	Size int64
	// Target is a symbolic link's target.
	Target string
	// Xattrs are set on the entry; DropXattrs are removed from it.
	Xattrs     map[string][]byte
	DropXattrs []string
	// Remove removes the entry (and its subtree) if present.
	Remove bool
	// Keep leaves an existing entry's type, content, mode and times alone
	// and changes only its xattrs (a missing entry is fs.ErrNotExist).
	Keep bool
}

// Populate writes items below directory dir (created with its parents,
// mode 0755, if missing) in one atomic mutation, without consulting the
// hooks: the mount layer's index, refresh and materialization. Parents of
// items are created as needed; an existing entry of the same type is
// updated in place (a file's content, mode, times and listed xattrs, a
// link's target), one of another type is replaced. The quota applies;
// when anything fails nothing changes.
func (f *FS) Populate(ctx context.Context, dir string, items []Item) error {
	const op = "populate"
	if err := validPath(op, dir); err != nil {
		return err
	}
	type stored struct {
		m      content.Manifest
		inline []meta.Object
	}
	var (
		in       content.Intents
		contents = make([]stored, len(items))
	)
	for i, it := range items {
		p := path.Join(dir, it.Path)
		if err := validPath(op, p); err != nil {
			return errors.Join(err, f.d.Content.Release(context.WithoutCancel(ctx), in))
		}
		switch {
		case it.Remove || it.Keep || it.Mode&(fs.ModeDir|fs.ModeSymlink) != 0:
		case it.Stub:
			if it.Size > 0 {
				contents[i].m = content.Manifest{Size: it.Size, Extents: []content.Extent{{Size: it.Size}}}
			}
		case len(it.Data) > 0:
			m, inline, ii, err := f.d.Content.Write(ctx, it.Data)
			if err != nil {
				return errors.Join(&fs.PathError{Op: op, Path: p, Err: err}, f.d.Content.Release(context.WithoutCancel(ctx), in))
			}
			contents[i] = stored{m: m, inline: inline}
			in = append(in, ii...)
		}
	}
	err := f.mutate(ctx, op, dir, in, func(t *txn) error {
		if err := t.mkdirAll(ctx, dir, 0o755); err != nil {
			return err
		}
		for i, it := range items {
			p := path.Join(dir, it.Path)
			if err := t.populate(ctx, p, it, contents[i].m, contents[i].inline); err != nil {
				return errdefs.PathError(op, p, err)
			}
		}
		return nil
	})
	if err == nil {
		f.notify(ctx, Event{Op: op, Name: dir, Tree: true})
	}
	return f.releaseOnError(ctx, err, in)
}

// mkdirAll creates directory p and its missing parents (not following a
// final symbolic link).
func (t *txn) mkdirAll(ctx context.Context, p string, perm uint32) error {
	if p == "." {
		return nil
	}
	comps := splitPath(p)
	for i := range comps {
		n, err := t.resolve(ctx, path.Join(comps[:i+1]...), true)
		if err != nil {
			return err
		}
		if n.exists() {
			if n.typ != typeDir {
				return errdefs.ErrNotDir
			}
			continue
		}
		if _, _, err := t.create(ctx, n.parent, n.name, typeDir, perm); err != nil {
			return err
		}
	}
	return nil
}

// populate writes one item at p.
func (t *txn) populate(ctx context.Context, p string, it Item, m content.Manifest, inline []meta.Object) error {
	if err := t.mkdirAll(ctx, path.Dir(p), 0o755); err != nil {
		return err
	}
	n, err := t.resolve(ctx, p, false)
	if err != nil {
		return err
	}
	if it.Keep {
		if !n.exists() {
			return fs.ErrNotExist
		}
		t.setXattrs(n.ino, it)
		return nil
	}
	typ := typeFile
	switch {
	case it.Mode&fs.ModeDir != 0:
		typ = typeDir
	case it.Mode&fs.ModeSymlink != 0:
		typ = typeSymlink
	}
	if n.exists() && (it.Remove || n.typ != typ) {
		if n.typ == typeDir {
			if err := t.emptyDir(ctx, n.ino); err != nil {
				return err
			}
		}
		if err := t.unlink(ctx, n.parent, n.name, dirent{ino: n.ino, typ: n.typ}); err != nil {
			return err
		}
		n.ino = 0
	}
	if it.Remove {
		return nil
	}

	ino := n.ino
	var a attr
	if ino == 0 {
		if ino, a, err = t.create(ctx, n.parent, n.name, typ, UnixMode(it.Mode)); err != nil {
			return err
		}
	} else if a, err = t.attr(ctx, ino); err != nil {
		return err
	}
	switch typ {
	case typeFile:
		if err := t.setContent(ctx, ino, &a, m, inline); err != nil {
			return err
		}
	case typeSymlink:
		a.size = int64(len(it.Target))
		t.set(inoKey(ino, kindLink, ""), []byte(it.Target))
	}
	a.perm = UnixMode(it.Mode) & permBits
	if !it.ModTime.IsZero() {
		a.mtime = it.ModTime.UnixNano()
	}
	t.putAttr(ino, &a)
	t.setXattrs(ino, it)
	return nil
}

// setXattrs applies it's Xattrs and DropXattrs to inode ino.
func (t *txn) setXattrs(ino uint64, it Item) {
	for k, v := range it.Xattrs {
		t.set(inoKey(ino, kindXattr, k), bytes.Clone(v))
	}
	for _, k := range it.DropXattrs {
		t.del(inoKey(ino, kindXattr, k))
	}
}

// FillStub replaces the bytes of stub name (following symbolic links) with
// data, keeping its mode and modification time, and removes its StubAttr,
// in one mutation that bypasses the hooks. It does nothing when name is no
// longer a stub whose StubAttr equals marker (filled by another reader,
// overwritten, or removed meanwhile); a changed size is the new size.
func (f *FS) FillStub(ctx context.Context, name string, marker, data []byte) error {
	const op = "fill"
	if err := validPath(op, name); err != nil {
		return err
	}
	var (
		m      content.Manifest
		inline []meta.Object
		in     content.Intents
	)
	if len(data) > 0 {
		var err error
		if m, inline, in, err = f.d.Content.Write(ctx, data); err != nil {
			return &fs.PathError{Op: op, Path: name, Err: err}
		}
	}
	err := f.mutate(ctx, op, name, in, func(t *txn) error {
		n, err := t.lookup(ctx, name, true)
		if err != nil || !n.exists() || n.typ != typeFile {
			return nil
		}
		k := inoKey(n.ino, kindXattr, StubAttr)
		v, ok, err := t.get(ctx, k)
		if err != nil || !ok || !bytes.Equal(v, marker) {
			return err
		}
		a, err := t.attr(ctx, n.ino)
		if err != nil {
			return err
		}
		mtime := a.mtime
		if err := t.setContent(ctx, n.ino, &a, m, inline); err != nil {
			return err
		}
		a.mtime = mtime
		t.putAttr(n.ino, &a)
		t.del(k)
		return nil
	})
	if err != nil {
		return f.releaseOnError(ctx, fmt.Errorf("fill stub: %w", err), in)
	}
	f.notify(ctx, Event{Op: op, Name: name})
	return nil
}

// Stored is a regular file's content written to the store by Store and
// named by no file yet: WriteStored makes it a file's content, Discard
// gives it up.
type Stored struct {
	data   []byte // for a write into a virtual mount (Store only)
	m      content.Manifest
	inline []meta.Object
	in     content.Intents
}

// Store writes data to the store for a later WriteStored, without taking
// any lock of f: bulk writers hash and store several files at once while
// one goroutine mutates (a Batch's function included). data must not
// change until WriteStored or Discard.
func (f *FS) Store(ctx context.Context, data []byte) (*Stored, error) {
	s := &Stored{data: data}
	if len(data) == 0 {
		return s, nil
	}
	var err error
	if s.m, s.inline, s.in, err = f.d.Content.Write(ctx, data); err != nil {
		return nil, err
	}
	return s, nil
}

// StoreFrom is Store of what r yields until io.EOF, streamed: the bytes
// are chunked and stored as they are read (content.Store.WriteFrom), never
// held whole, so a bulk writer can store a large file while other
// goroutines store and write the files before it. name is the file
// WriteStored is meant to write (for errors). A stream larger than the
// whole byte quota fails with errdefs.ErrQuota once it passes it; an error
// from r fails it, wrapped.
func (f *FS) StoreFrom(ctx context.Context, name string, r io.Reader) (*Stored, error) {
	room := f.quota.MaxBytes
	if room <= 0 {
		room = -1
	}
	s := &Stored{}
	var err error
	if _, s.m, s.inline, s.in, err = f.stream(ctx, "write", name, r, room); err != nil {
		return nil, err
	}
	return s, nil
}

// storedBytes returns the data s was stored from, for a write into a virtual
// mount: Store keeps it; StoreFrom's is read back from the content store.
func (f *FS) storedBytes(ctx context.Context, s *Stored) ([]byte, error) {
	if s.data != nil || s.m.Size == 0 {
		return s.data, nil
	}
	return f.d.Content.ReadAll(ctx, s.m)
}

// WriteStored is WriteFile of the data s was stored from. It takes s
// over: s's upload intents are released with the mutation, or when it
// fails.
func (f *FS) WriteStored(ctx context.Context, name string, s *Stored, perm fs.FileMode) error {
	const op = "write"
	err := validPath(op, name)
	if err == nil {
		err = f.writable(op, name)
	}
	if _, _, ok := f.virtual(ctx, name); ok && err == nil {
		data, rerr := f.storedBytes(ctx, s)
		if rerr == nil {
			_, rerr = f.virtualWrite(ctx, op, name, data, perm)
		}
		return errors.Join(rerr, f.Discard(ctx, s)) // its bytes went to the mount
	}
	if q := f.quota.MaxBytes; err == nil && q > 0 && s.m.Size > q {
		err = &fs.PathError{Op: op, Path: name, Err: fmt.Errorf("%w: %d bytes are more than the whole %d-byte quota", errdefs.ErrQuota, s.m.Size, q)}
	}
	if err != nil {
		return f.releaseOnError(ctx, err, s.in)
	}
	return f.replaceContent(ctx, op, name, perm, s.m, s.inline, s.in, nil)
}

// Discard releases s, which no file will name.
func (f *FS) Discard(ctx context.Context, s *Stored) error {
	return f.d.Content.Release(context.WithoutCancel(ctx), s.in)
}
