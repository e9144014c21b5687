package fusefs

import (
	"context"
	"sync"
	"syscall"
	"time"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/forkspace/forkspace/vfs"
)

// single is the root node of a one-workspace mount: the workspace's root
// directory.
type single struct{ node }

func newRoot(fsys *vfs.FS, opts *Options) *single {
	w := newWS(fsys, opts, 0)
	w.cps, w.spaces = opts.Checkpoints, &spaces{}
	return &single{node{w: w}}
}

func (s *single) stop() { s.w.stop() }

// multi is the root of MountAll: one directory per workspace, looked up
// and listed live. Workspace i's inode numbers carry i in their top 16
// bits, so inodes of forks (which share numbers) stay apart.
type multi struct {
	gofs.Inode
	ws      Workspaces
	opts    *Options
	spaces  spaces
	mounted time.Time // the directory's times: it changes with no store

	mu     sync.Mutex
	byName map[string]*ws
}

var (
	_ gofs.NodeLookuper  = (*multi)(nil)
	_ gofs.NodeReaddirer = (*multi)(nil)
	_ gofs.NodeGetattrer = (*multi)(nil)
	_ gofs.NodeStatfser  = (*multi)(nil)
)

func newMulti(w Workspaces, opts *Options) *multi {
	return &multi{ws: w, opts: opts, byName: map[string]*ws{}, mounted: time.Now()}
}

// wsShift places a workspace's index above the inode numbers vfs
// allocates.
const wsShift = 48

// workspace returns the mounted workspace for fsys named name, a new one
// when the name now opens another FS (deleted and created again).
func (m *multi) workspace(name string, fsys *vfs.FS, cps Checkpoints) *ws {
	m.mu.Lock()
	defer m.mu.Unlock()
	if w := m.byName[name]; w != nil {
		if w.fs == fsys {
			return w
		}
		w.stop()
	}
	w := newWS(fsys, m.opts, m.spaces.alloc())
	w.cps, w.spaces = cps, &m.spaces
	m.byName[name] = w
	return w
}

func (m *multi) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	ctx = context.WithoutCancel(ctx) // see ws.ctx
	fsys, cps, err := m.ws.Open(ctx, name)
	if err != nil {
		e, _ := errno(err)
		return nil, e
	}
	w := m.workspace(name, fsys, cps)
	return w.mountAt(ctx, &m.Inode, name, out)
}

func (m *multi) Readdir(ctx context.Context) (gofs.DirStream, syscall.Errno) {
	names, err := m.ws.Names(context.WithoutCancel(ctx))
	if err != nil {
		e, _ := errno(err)
		return nil, e
	}
	out := dots(len(names))
	for _, n := range names {
		out = append(out, fuse.DirEntry{Name: n, Mode: syscall.S_IFDIR})
	}
	return gofs.NewListDirStream(out), 0
}

func (m *multi) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	out.Mode = syscall.S_IFDIR | 0o755
	out.Nlink = 2
	out.SetTimes(&m.mounted, &m.mounted, &m.mounted)
	return 0
}

func (m *multi) Statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	statfs(out, 0, 0, 0, 0)
	return 0
}

func (m *multi) stop() {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, w := range m.byName {
		w.stop()
	}
}

// dots starts a listing of n entries with "." and "..".
func dots(n int) []fuse.DirEntry {
	out := make([]fuse.DirEntry, 0, n+2)
	return append(out, fuse.DirEntry{Name: ".", Mode: syscall.S_IFDIR}, fuse.DirEntry{Name: "..", Mode: syscall.S_IFDIR})
}
