package vfs

import (
	"context"
	"fmt"
	"io/fs"

	"github.com/forkspace/forkspace/content"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/kv"
	"github.com/forkspace/forkspace/meta"
)

// txn is one operation's view of the key space: the FS's merged view plus
// the mutations the operation has staged so far (read back by get, so
// multi-step operations compose). Scans see the view without the staged
// mutations. A txn lives under the FS lock of the operation that made it.
type txn struct {
	f      *FS
	view   kv.View
	muts   []kv.Mutation
	index  map[string]int // key → position in muts, built past a few keys
	inline []meta.Object
	// intents are upload intents (content.Intents) the commit releases.
	intents content.Intents
	now     int64 // Unix ns, for times the operation sets
	// also are metadata writes that commit with the mutations (a Batch's
	// FS.AlsoCommit); hooks are those that run once the mutations' rows
	// are written (WithCommit).
	also  []func(meta.Tx) error
	hooks []*commitHook
	// changed reports the mutation to the hooks and watchers; req is its
	// request when it was deferred (WithDeferredCommit).
	changed func()
	req     *commitReq
}

const txnIndexAfter = 16

func (t *txn) find(key []byte) int {
	if t.index != nil {
		if i, ok := t.index[string(key)]; ok {
			return i
		}
		return -1
	}
	for i := range t.muts {
		if string(t.muts[i].Key) == string(key) {
			return i
		}
	}
	return -1
}

func (t *txn) put(m kv.Mutation) {
	if i := t.find(m.Key); i >= 0 {
		t.muts[i] = m
		return
	}
	t.muts = append(t.muts, m)
	switch {
	case t.index != nil:
		t.index[string(m.Key)] = len(t.muts) - 1
	case len(t.muts) > txnIndexAfter:
		t.index = make(map[string]int, 2*len(t.muts))
		for i, m := range t.muts {
			t.index[string(m.Key)] = i
		}
	}
}

func (t *txn) set(key, value []byte) { t.put(kv.Mutation{Key: key, Value: value}) }
func (t *txn) del(key []byte)        { t.put(kv.Mutation{Key: key, Delete: true}) }

// get reads key, seeing this operation's own mutations first.
func (t *txn) get(ctx context.Context, key []byte) ([]byte, bool, error) {
	if len(t.muts) > 0 {
		if i := t.find(key); i >= 0 {
			m := t.muts[i]
			return m.Value, !m.Delete, nil
		}
	}
	return t.view.Get(ctx, key)
}

// attr returns an inode's attributes; a missing inode is fs.ErrNotExist.
// The root of a tree without a root record (the empty tree) reads as an
// empty directory.
func (t *txn) attr(ctx context.Context, ino uint64) (attr, error) {
	v, ok, err := t.get(ctx, inoKey(ino, kindAttr, ""))
	if err != nil {
		return attr{}, err
	}
	if !ok {
		if ino == rootIno {
			return rootAttr(0), nil
		}
		return attr{}, fmt.Errorf("read inode %d: %w", ino, fs.ErrNotExist)
	}
	return decodeAttr(v)
}

func (t *txn) putAttr(ino uint64, a *attr) { t.set(inoKey(ino, kindAttr, ""), encodeAttr(a)) }

// entry looks up name in directory dir.
func (t *txn) entry(ctx context.Context, dir uint64, name string) (dirent, bool, error) {
	v, ok, err := t.get(ctx, inoKey(dir, kindDirent, name))
	if err != nil || !ok {
		return dirent{}, false, err
	}
	d, err := decodeDirent(v)
	return d, err == nil, err
}

// touchDir sets a directory's mtime and ctime to now and adds dlink to its
// link count (subdirectories added or removed).
func (t *txn) touchDir(ctx context.Context, dir uint64, dlink int) error {
	a, err := t.attr(ctx, dir)
	if err != nil {
		return err
	}
	a.mtime, a.ctime = t.now, t.now
	a.nlink = uint32(int(a.nlink) + dlink)
	t.putAttr(dir, &a)
	return nil
}

// create makes a new inode of type typ linked as parent/name (which the
// caller checked is free) and returns its number and attributes.
func (t *txn) create(ctx context.Context, parent uint64, name string, typ fileType, perm uint32) (uint64, attr, error) {
	if err := t.addUsage(ctx, 0, 1); err != nil {
		return 0, attr{}, err
	}
	ino, err := t.f.allocIno(ctx)
	if err != nil {
		return 0, attr{}, err
	}
	a := attr{typ: typ, perm: perm & permBits, nlink: 1, atime: t.now, mtime: t.now, ctime: t.now, parent: parent, name: name}
	if o, ok := ctx.Value(ownerKey{}).(owner); ok {
		a.uid, a.gid = o.uid, o.gid
		pa, err := t.attr(ctx, parent)
		if err != nil {
			return 0, attr{}, err
		}
		if pa.perm&setgidBit != 0 {
			a.gid = pa.gid
			if typ == typeDir {
				a.perm |= setgidBit
			}
		}
	}
	dlink := 0
	if typ == typeDir {
		a.nlink, dlink = 2, 1
	}
	t.putAttr(ino, &a)
	t.set(inoKey(parent, kindDirent, name), encodeDirent(ino, typ))
	return ino, a, t.touchDir(ctx, parent, dlink)
}

type ownerKey struct{}

// owner is the creator WithOwner names.
type owner struct{ uid, gid uint32 }

// setgidBit is the set-group-ID bit of attr.perm.
const setgidBit = 0o2000

// WithOwner returns a context under which the inodes an operation
// creates are owned by uid:gid, as a process's creations are on a Unix
// file system: in a directory with the setgid bit they take the
// directory's group instead, and a new directory there is setgid too.
// Without it new inodes are owned by 0:0.
func WithOwner(ctx context.Context, uid, gid uint32) context.Context {
	return context.WithValue(ctx, ownerKey{}, owner{uid: uid, gid: gid})
}

// unlink removes entry parent/name, which refers to d, and drops the
// inode when its last link goes. Directories must already be empty (or be
// emptied by the caller in the same txn).
func (t *txn) unlink(ctx context.Context, parent uint64, name string, d dirent) error {
	t.del(inoKey(parent, kindDirent, name))
	dlink := 0
	if d.typ == typeDir {
		dlink = -1
	}
	if err := t.touchDir(ctx, parent, dlink); err != nil {
		return err
	}
	a, err := t.attr(ctx, d.ino)
	if err != nil {
		return err
	}
	if d.typ != typeDir && a.nlink > 1 {
		a.nlink--
		a.ctime = t.now
		if a.parent == parent && a.name == name {
			// Promote another link to primary.
			p, n, err := t.firstBacklink(ctx, d.ino)
			if err != nil {
				return err
			}
			a.parent, a.name = p, n
			t.del(backlinkKey(d.ino, p, n))
		} else {
			t.del(backlinkKey(d.ino, parent, name))
		}
		t.putAttr(d.ino, &a)
		return nil
	}
	return t.drop(ctx, d.ino, &a)
}

// drop deletes every record of inode ino and releases its usage.
func (t *txn) drop(ctx context.Context, ino uint64, a *attr) error {
	var bytes int64
	if a.typ == typeFile {
		bytes = a.size
	}
	if err := t.addUsage(ctx, -bytes, -1); err != nil {
		return err
	}
	start, end := inoSpan(ino)
	err := t.view.Scan(ctx, start, end, func(k, _ []byte) error {
		t.del(k)
		return nil
	})
	if err != nil {
		return err
	}
	t.del(inoKey(ino, kindAttr, ""))
	t.del(inoKey(ino, kindContent, ""))
	return nil
}

// firstBacklink returns the first secondary link of ino; a hard-linked
// inode with nlink > 1 has at least one.
func (t *txn) firstBacklink(ctx context.Context, ino uint64) (uint64, string, error) {
	var (
		p     uint64
		n     string
		found bool
	)
	start, end := inoRange(ino, kindBacklink)
	err := t.view.Scan(ctx, start, end, func(k, _ []byte) error {
		if _, live, err := t.get(ctx, k); err != nil || !live {
			return err
		}
		p, n, found = parseBacklink(k)
		return kv.Stop
	})
	if err == nil && !found {
		err = fmt.Errorf("find links of inode %d: %w", ino, errdefs.ErrCorrupt)
	}
	return p, n, err
}

// manifest returns the content manifest of a file (empty if it has none).
func (t *txn) manifest(ctx context.Context, ino uint64) (content.Manifest, error) {
	v, ok, err := t.get(ctx, inoKey(ino, kindContent, ""))
	if err != nil || !ok {
		return content.Manifest{}, err
	}
	return content.Decode(v)
}

// setContent records file ino's new content m (with inline bodies to
// store), updating its size, times and the usage.
func (t *txn) setContent(ctx context.Context, ino uint64, a *attr, m content.Manifest, inline []meta.Object) error {
	if err := t.addUsage(ctx, m.Size-a.size, 0); err != nil {
		return err
	}
	t.inline = append(t.inline, inline...)
	if m.Size == 0 && len(m.Extents) == 0 {
		t.del(inoKey(ino, kindContent, ""))
	} else {
		t.set(inoKey(ino, kindContent, ""), m.Encode())
	}
	a.size = m.Size
	a.mtime, a.ctime = t.now, t.now
	t.putAttr(ino, a)
	return t.dropStub(ctx, ino)
}

// dirEmpty reports whether directory ino has no entries.
func (t *txn) dirEmpty(ctx context.Context, ino uint64) (bool, error) {
	empty := true
	start, end := inoRange(ino, kindDirent)
	err := t.view.Scan(ctx, start, end, func(k, _ []byte) error {
		if _, live, err := t.get(ctx, k); err != nil || !live {
			return err
		}
		empty = false
		return kv.Stop
	})
	return empty, err
}
