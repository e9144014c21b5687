package vfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/forkspace/forkspace/content"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/meta"
)

// ReadFile returns the contents of file name, following symbolic links. A
// directory is errdefs.ErrIsDir.
func (f *FS) ReadFile(ctx context.Context, name string) ([]byte, error) {
	const op = "read"
	if err := validPath(op, name); err != nil {
		return nil, err
	}
	if v, rel, ok := f.virtual(ctx, name); ok {
		data, err := v.ReadFile(ctx, rel)
		return data, virtErr(op, name, err)
	}
	if err := f.hydrate(ctx, op, name); err != nil {
		return nil, err
	}
	var m content.Manifest
	err := f.read(ctx, op, name, func(t *txn) error {
		n, err := t.lookupFile(ctx, name)
		if err != nil {
			return err
		}
		m, err = t.manifest(ctx, n.ino)
		return err
	})
	if err != nil {
		return nil, err
	}
	data, err := f.d.Content.ReadAll(ctx, m)
	if err != nil {
		return nil, &fs.PathError{Op: op, Path: name, Err: err}
	}
	return data, nil
}

// ReadFiles reads the files names as ReadFile reads each and calls fn
// with each one's contents or error, in order. The names are resolved
// together under one read lock, consecutive names in one directory from
// that directory, resolved once (links followed to a directory and from
// it to a name count apart toward the limit on links), and the small
// files' bodies read from metadata in one request (content.Store.ReadFiles)
// instead of one each; a virtual path or a stub is read by ReadFile. data
// may be shared with the content cache: fn may keep it but must not modify
// it. An error from fn stops ReadFiles and is returned; otherwise only a
// closed FS fails it as a whole. The contents of all of names are held at
// once: callers bound len(names).
func (f *FS) ReadFiles(ctx context.Context, names []string, fn func(i int, data []byte, err error) error) error {
	return f.ReadFilesIn(ctx, ".", names, fn)
}

// ReadFilesIn is ReadFiles of names relative to directory dir: dir is
// resolved once, and each name from it rather than from the root. Errors
// name the paths dir/name. A dir that cannot be resolved fails every name.
func (f *FS) ReadFilesIn(ctx context.Context, dir string, names []string, fn func(i int, data []byte, err error) error) error {
	const op = "read"
	paths := make([]string, len(names))
	errs := make([]error, len(names))
	alone := make([]bool, len(names)) // read by ReadFile
	for i, name := range names {
		paths[i] = pathIn(dir, name)
		if errs[i] = validPath(op, paths[i]); errs[i] == nil {
			_, _, alone[i] = f.virtual(ctx, paths[i])
		}
	}
	var (
		batch []int // indexes of the names read in the batch
		ms    []content.Manifest
	)
	err := f.read(ctx, op, dir, func(t *txn) error {
		var dirs subdirs
		dirs.base, dirs.err = t.dirStack(ctx, dir) // fails every name
		for i, name := range names {
			if errs[i] != nil || alone[i] {
				continue
			}
			sub, base := splitLast(name)
			m, stub := content.Manifest{}, false
			stack, ferr := dirs.stack(ctx, t, sub)
			if ferr == nil {
				m, stub, ferr = t.fileManifest(ctx, stack, base)
			}
			switch {
			case ferr != nil:
				errs[i] = errdefs.PathError(op, paths[i], ferr)
			case stub:
				alone[i] = true
			default:
				batch = append(batch, i)
				ms = append(ms, m)
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	datas := make([][]byte, len(names))
	err = f.d.Content.ReadFiles(ctx, ms, func(j int, data []byte, err error) error {
		i := batch[j]
		datas[i] = data
		if err != nil {
			errs[i] = &fs.PathError{Op: op, Path: paths[i], Err: err}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for i, p := range paths {
		data, err := datas[i], errs[i]
		if alone[i] && err == nil {
			data, err = f.ReadFile(ctx, p)
		}
		datas[i] = nil // drop it as fn goes
		if err := fn(i, data, err); err != nil {
			return err
		}
	}
	return nil
}

// subdirs resolves the directories of names relative to directory base
// for ReadFilesIn, remembering the last one: consecutive names in one
// directory (a listing's files) resolve it once, not once each.
type subdirs struct {
	base []uint64 // base's stack (dirStack), or err
	err  error

	last      string // the last subdirectory resolved ("" for none)
	lastStack []uint64
	lastErr   error
}

// stack returns the stack of directory sub of base ("" for base itself).
func (d *subdirs) stack(ctx context.Context, t *txn, sub string) ([]uint64, error) {
	switch {
	case d.err != nil || sub == "":
		return d.base, d.err
	case sub != d.last:
		d.last = sub
		d.lastStack, d.lastErr = t.dirStackIn(ctx, d.base, sub)
	}
	return d.lastStack, d.lastErr
}

// splitLast splits the valid path p into its directory ("" for none) and
// its last element.
func splitLast(p string) (dir, name string) {
	i := strings.LastIndexByte(p, '/')
	if i < 0 {
		return "", p
	}
	return p[:i], p[i+1:]
}

// fileManifest resolves name relative to the directories dir (from the
// root, as dirStack returns them; following links) to a regular file and
// returns its manifest, and whether it is a stub that a read must hydrate
// first.
func (t *txn) fileManifest(ctx context.Context, dir []uint64, name string) (content.Manifest, bool, error) {
	var buf [16]uint64
	n, _, err := t.resolveIn(ctx, append(buf[:0], dir...), name, true)
	if err == nil {
		err = fileNode(n)
	}
	if err != nil {
		return content.Manifest{}, false, err
	}
	m, err := t.manifest(ctx, n.ino)
	if err != nil {
		return content.Manifest{}, false, err
	}
	stub, err := t.isStub(ctx, n.ino, m)
	return m, stub, err
}

// lookupFile resolves name (following links) and fails unless it is a
// regular file: fs.ErrNotExist or errdefs.ErrIsDir.
func (t *txn) lookupFile(ctx context.Context, name string) (node, error) {
	n, err := t.resolve(ctx, name, true)
	if err == nil {
		err = fileNode(n)
	}
	return n, err
}

// fileNode fails unless n is a regular file: fs.ErrNotExist,
// errdefs.ErrIsDir or the error of a special file.
func fileNode(n node) error {
	switch {
	case !n.exists():
		return fs.ErrNotExist
	case n.typ == typeDir:
		return errdefs.ErrIsDir
	case n.typ.special():
		return errSpecial(n.typ)
	}
	return nil
}

// errSpecial is the error of reading or writing the contents of a special
// file, which has none here.
func errSpecial(t fileType) error {
	return fmt.Errorf("%w: a %s has no contents in a workspace", errors.ErrUnsupported, t)
}

// WriteFile replaces the contents of file name with data, creating it with
// permission bits perm if needed (a final symbolic link is followed, and a
// dangling one creates its target). The bytes are stored before the
// mutation commits; when WriteFile returns nil the new contents are
// durable. A directory is errdefs.ErrIsDir; passing the quota is
// errdefs.ErrQuota and changes nothing.
func (f *FS) WriteFile(ctx context.Context, name string, data []byte, perm fs.FileMode) error {
	const op = "write"
	if err := validPath(op, name); err != nil {
		return err
	}
	if err := f.writable(op, name); err != nil {
		return err
	}
	if done, err := f.virtualWrite(ctx, op, name, data, perm); done {
		return err
	}
	if q := f.quota.MaxBytes; q > 0 && int64(len(data)) > q {
		return &fs.PathError{Op: op, Path: name, Err: fmt.Errorf("%w: %d bytes are more than the whole %d-byte quota", errdefs.ErrQuota, len(data), q)}
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
	return f.replaceContent(ctx, op, name, perm, m, inline, in, nil)
}

// replaceContent makes m (stored, with inline bodies and the intents that
// hold its chunks) the contents of file name, creating it with perm if
// needed, in one mutation.
func (f *FS) replaceContent(ctx context.Context, op, name string, perm fs.FileMode, m content.Manifest, inline []meta.Object, in content.Intents, cond func(fs.FileInfo) error) error {
	err := f.updateContent(ctx, op, name, in, func(t *txn) error {
		if cond != nil {
			if err := t.checkCond(ctx, name, cond); err != nil {
				return err
			}
		}
		ino, a, err := t.openCreate(ctx, name, UnixMode(perm), false)
		if err != nil {
			return err
		}
		return t.setContent(ctx, ino, &a, m, inline)
	})
	return f.releaseOnError(ctx, err, in)
}

// WriteFileFrom is WriteFile with the contents read from r until io.EOF,
// streamed to the store (never held whole in memory), and returns the
// number of bytes read. It is atomic like WriteFile: the file is replaced
// by everything r yields, or, when r fails, ctx ends or the byte quota
// would be passed (errdefs.ErrQuota, found as soon as the bytes read pass
// the room the quota leaves), nothing changes and a new file is not
// created.
func (f *FS) WriteFileFrom(ctx context.Context, name string, r io.Reader, perm fs.FileMode) (int64, error) {
	return f.writeFileFrom(ctx, name, r, perm, nil)
}

func (f *FS) writeFileFrom(ctx context.Context, name string, r io.Reader, perm fs.FileMode, cond func(fs.FileInfo) error) (int64, error) {
	const op = "write"
	if err := validPath(op, name); err != nil {
		return 0, err
	}
	if err := f.writable(op, name); err != nil {
		return 0, err
	}
	if _, _, ok := f.virtual(ctx, name); ok {
		data, err := io.ReadAll(r)
		if err != nil {
			return int64(len(data)), &fs.PathError{Op: op, Path: name, Err: err}
		}
		if cond != nil {
			if err := f.virtualCond(ctx, op, name, cond); err != nil {
				return int64(len(data)), err
			}
		}
		_, err = f.virtualWrite(ctx, op, name, data, perm)
		return int64(len(data)), err
	}
	room, err := f.room(ctx, op, name)
	if err != nil {
		return 0, err
	}
	n, m, inline, in, err := f.stream(ctx, op, name, r, room)
	if err != nil {
		return n, err
	}
	return n, f.replaceContent(ctx, op, name, perm, m, inline, in, cond)
}

// room returns how large file name may become under the byte quota now
// (its current size plus the free bytes), or -1 without a byte quota; a
// directory at name is errdefs.ErrIsDir, found before anything is read.
// The commit checks again; room only stops a stream early.
func (f *FS) room(ctx context.Context, op, name string) (int64, error) {
	q, room := f.quota.MaxBytes, int64(-1)
	err := f.read(ctx, op, name, func(t *txn) error {
		n, err := t.lookup(ctx, name, true)
		exists := err == nil && n.exists()
		switch {
		case exists && n.typ == typeDir:
			return errdefs.ErrIsDir
		case q <= 0:
			return nil
		}
		u, err := t.usage(ctx)
		if err != nil {
			return err
		}
		room = max(q-u.Bytes, 0)
		if exists && n.typ == typeFile {
			a, err := t.attr(ctx, n.ino)
			if err != nil {
				return err
			}
			room += a.size
		}
		return nil
	})
	return room, err
}

// releaseOnError releases the upload intents of an operation that failed.
func (f *FS) releaseOnError(ctx context.Context, err error, in content.Intents) error {
	if err == nil {
		return nil
	}
	return errors.Join(err, f.d.Content.Release(context.WithoutCancel(ctx), in))
}

// writable fails with errdefs.ErrReadOnly on a snapshot, before any work.
func (f *FS) writable(op, name string) error {
	if f.readOnly {
		return &fs.PathError{Op: op, Path: name, Err: errdefs.ErrReadOnly}
	}
	return nil
}

// openCreate resolves name (following links) to a regular file, creating
// it with perm when missing; excl makes an existing entry fs.ErrExist.
func (t *txn) openCreate(ctx context.Context, name string, perm uint32, excl bool) (uint64, attr, error) {
	n, err := t.resolve(ctx, name, !excl)
	if err != nil {
		return 0, attr{}, err
	}
	if !n.exists() {
		return t.create(ctx, n.parent, n.name, typeFile, perm)
	}
	if excl {
		return 0, attr{}, fs.ErrExist
	}
	if n.typ == typeDir {
		return 0, attr{}, errdefs.ErrIsDir
	}
	if n.typ.special() {
		return 0, attr{}, errSpecial(n.typ)
	}
	a, err := t.attr(ctx, n.ino)
	return n.ino, a, err
}

// Truncate changes the size of file name (following symbolic links);
// growth reads as zeros and stores nothing (a hole). A negative size is
// fs.ErrInvalid; a directory is errdefs.ErrIsDir.
func (f *FS) Truncate(ctx context.Context, name string, size int64) error {
	const op = "truncate"
	if err := validPath(op, name); err != nil {
		return err
	}
	if err := f.writable(op, name); err != nil {
		return err
	}
	if size < 0 {
		return &fs.PathError{Op: op, Path: name, Err: fmt.Errorf("%w: negative size", fs.ErrInvalid)}
	}
	if err := f.hydrate(ctx, op, name); err != nil {
		return err
	}
	var base content.Manifest
	err := f.read(ctx, op, name, func(t *txn) error {
		n, err := t.lookupFile(ctx, name)
		if err != nil {
			return err
		}
		base, err = t.manifest(ctx, n.ino)
		return err
	})
	if err != nil {
		return err
	}
	m, inline, in, err := f.resize(ctx, base, size)
	if err != nil {
		return &fs.PathError{Op: op, Path: name, Err: err}
	}
	err = f.updateContent(ctx, op, name, in, func(t *txn) error {
		n, err := t.lookupFile(ctx, name)
		if err != nil {
			return err
		}
		a, err := t.attr(ctx, n.ino)
		if err != nil {
			return err
		}
		return t.setContent(ctx, n.ino, &a, m, inline)
	})
	return f.releaseOnError(ctx, err, in)
}

// resize returns the manifest of base cut or extended to size.
func (f *FS) resize(ctx context.Context, base content.Manifest, size int64) (content.Manifest, []meta.Object, content.Intents, error) {
	if size == 0 {
		return content.Manifest{}, nil, nil, nil
	}
	if size == base.Size {
		return base, nil, nil, nil
	}
	d := f.d.Content.NewDraft(base)
	defer d.Discard()
	if err := d.Truncate(size); err != nil {
		return content.Manifest{}, nil, nil, err
	}
	return d.Commit(ctx)
}
