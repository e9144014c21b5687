package fusefs

import (
	"context"
	"strings"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/forkspace/forkspace/vfs"
)

// mountAt returns w's root directory as parent's child name, attached.
// The inode the kernel already knows under that name is reused when it
// is w's root: a lookup after the kernel's cache expired would otherwise
// attach a new inode that go-fuse then drops for the one it has (same
// identity), leaving w's root an inode the kernel never reaches, and
// every path beneath it ENOENT (node.path).
func (w *ws) mountAt(ctx context.Context, parent *gofs.Inode, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	fi, err := w.fs.Lstat(ctx, ".")
	if err != nil {
		return nil, w.errno("lookup", err)
	}
	w.fill(fi, &out.Attr)
	id := gofs.StableAttr{Mode: syscall.S_IFDIR, Ino: out.Attr.Ino}
	in := parent.GetChild(name)
	if in == nil || in.StableAttr() != id {
		in = parent.NewInode(ctx, &node{w: w}, id)
	}
	w.attach(in)
	return in, 0
}

// attach makes root the inode of w's root and starts watching w's FS:
// a change made through any other surface invalidates what the kernel
// caches of it (the entry, attributes and pages; the whole known subtree
// for a restore or a mount's index) before the change's call returns.
// The mount's own changes are skipped: the kernel made them.
func (w *ws) attach(root *gofs.Inode) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.root = root
	if w.stopWatch != nil {
		return
	}
	w.stopWatch = w.fs.Watch(func(ctx context.Context, e vfs.Event) {
		if ctx.Value(originKey{}) == w {
			return
		}
		w.xgen.Add(1) // the change may have set an attribute (node.noCap)
		w.invalidate(e)
	})
}

// stop stops watching.
func (w *ws) stop() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.stopWatch != nil {
		w.stopWatch()
		w.stopWatch = nil
	}
}

// invalidate drops the kernel's cache of e's path: the entry in its
// parent (a negative one included), the inode's attributes and pages,
// and with e.Tree everything known beneath it. Inodes the kernel never
// looked up have nothing cached.
func (w *ws) invalidate(e vfs.Event) {
	in := w.rootInode()
	if in == nil {
		return
	}
	if e.Name != "." {
		comps := strings.Split(e.Name, "/")
		for i, c := range comps {
			ch := in.GetChild(c)
			// A name the kernel does not know, the last one, or one
			// the mount made up (.forkspace, now shadowed by an entry
			// of the workspace) is looked up again.
			virtual := ch != nil && asNode(ch.Operations()) == nil
			if ch == nil || virtual || i == len(comps)-1 {
				in.NotifyEntry(c)
			}
			if ch == nil || virtual {
				return
			}
			in = ch
		}
	}
	in.NotifyContent(0, 0)
	if e.Tree {
		invalidateTree(in)
	}
}

// invalidateTree drops every known entry and inode beneath in.
func invalidateTree(in *gofs.Inode) {
	for name, ch := range in.Children() {
		in.NotifyEntry(name)
		ch.NotifyContent(0, 0)
		invalidateTree(ch)
	}
}
