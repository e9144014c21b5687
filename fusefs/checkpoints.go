package fusefs

import (
	"context"
	"sync"
	"sync/atomic"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/forkspace/forkspace/vfs"
)

// Checkpoints are the checkpoints of a mounted workspace, shown read-only
// under its hidden directory .forkspace/checkpoints/.
type Checkpoints interface {
	// Names lists the directory names of the checkpoints: each label
	// (once, for the newest checkpoint carrying it) and the ID of each
	// checkpoint without a usable label.
	Names(ctx context.Context) ([]string, error)
	// At returns the read-only state of checkpoint name (a label or an
	// ID); fs.ErrNotExist when there is none.
	At(ctx context.Context, name string) (*vfs.FS, error)
}

// MetaDir is the hidden directory at the root of a mounted live
// workspace: not listed (like .zfs on ZFS), but reachable by name, unless
// the workspace has an entry of that name itself.
const MetaDir = ".forkspace"

// spaces hands out the inode-number spaces (top 16 bits) of the
// workspaces and checkpoints of one mount.
type spaces struct{ next atomic.Uint64 }

func (s *spaces) alloc() uint64 { return s.next.Add(1) << wsShift }

// metaDir is .forkspace: one entry, "checkpoints".
type metaDir struct {
	gofs.Inode
	w *ws
}

var (
	_ gofs.NodeLookuper  = (*metaDir)(nil)
	_ gofs.NodeReaddirer = (*metaDir)(nil)
	_ gofs.NodeGetattrer = (*metaDir)(nil)
	_ gofs.NodeLookuper  = (*cpDir)(nil)
	_ gofs.NodeReaddirer = (*cpDir)(nil)
	_ gofs.NodeGetattrer = (*cpDir)(nil)
)

func (d *metaDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	if name != "checkpoints" {
		return nil, syscall.ENOENT
	}
	virtualDir(&out.Attr)
	return d.NewInode(ctx, &cpDir{w: d.w, open: map[string]*ws{}}, gofs.StableAttr{Mode: syscall.S_IFDIR}), 0
}

func (d *metaDir) Readdir(ctx context.Context) (gofs.DirStream, syscall.Errno) {
	return gofs.NewListDirStream(append(dots(1), fuse.DirEntry{Name: "checkpoints", Mode: syscall.S_IFDIR})), 0
}

func (d *metaDir) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	virtualDir(&out.Attr)
	return 0
}

// virtualDir fills the attributes of a directory the mount makes up.
func virtualDir(a *fuse.Attr) {
	a.Mode = syscall.S_IFDIR | 0o555
	a.Nlink = 2
}

// cpDir is .forkspace/checkpoints: one read-only directory per
// checkpoint, looked up and listed live.
type cpDir struct {
	gofs.Inode
	w *ws

	mu   sync.Mutex
	open map[string]*ws // by name: a checkpoint never changes
}

func (d *cpDir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	ctx = context.WithoutCancel(ctx) // see ws.ctx
	d.mu.Lock()
	w := d.open[name]
	d.mu.Unlock()
	if w == nil {
		fsys, err := d.w.cps.At(ctx, name)
		if err != nil {
			return nil, d.w.errno("lookup", err)
		}
		opts := *d.w.opts
		opts.ReadOnly = true
		w = newWS(fsys, &opts, d.w.spaces.alloc())
		w.spaces = d.w.spaces
		d.mu.Lock()
		if prev := d.open[name]; prev != nil {
			w = prev
		} else {
			d.open[name] = w
		}
		d.mu.Unlock()
	}
	return w.mountAt(ctx, &d.Inode, name, out)
}

func (d *cpDir) Readdir(ctx context.Context) (gofs.DirStream, syscall.Errno) {
	names, err := d.w.cps.Names(context.WithoutCancel(ctx))
	if err != nil {
		return nil, d.w.errno("readdir", err)
	}
	out := dots(len(names))
	for _, n := range names {
		out = append(out, fuse.DirEntry{Name: n, Mode: syscall.S_IFDIR})
	}
	return gofs.NewListDirStream(out), 0
}

func (d *cpDir) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	virtualDir(&out.Attr)
	return 0
}
