package fusefs

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"golang.org/x/sys/unix"

	"github.com/forkspace/forkspace/audit"
	"github.com/forkspace/forkspace/vfs"
)

// ws is one mounted workspace: its FS and the inode at its root.
type ws struct {
	fs   *vfs.FS
	opts *Options
	ro   bool
	hi   uint64 // added to the workspace's inode numbers (MountAll)
	log  *slog.Logger

	cps    Checkpoints // nil: no .forkspace directory
	spaces *spaces     // inode-number spaces of the mount

	mu        sync.Mutex
	root      *gofs.Inode // nil until the kernel first reaches it
	stopWatch func()

	// xgen counts the changes that may have given a file an extended
	// attribute the mount's cache does not know of (node.noCap): every
	// change heard from another surface, every setxattr through the
	// mount. It moves once the change is made.
	xgen atomic.Uint64
}

func newWS(fsys *vfs.FS, opts *Options, hi uint64) *ws {
	return &ws{fs: fsys, opts: opts, ro: opts.ReadOnly || fsys.ReadOnly(), hi: hi, log: opts.logger()}
}

// metaDir returns the hidden .forkspace directory of w's root, if w
// shows checkpoints.
func (n *node) metaDir(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, bool) {
	if name != MetaDir || n.w.cps == nil || &n.Inode != n.w.rootInode() {
		return nil, false
	}
	virtualDir(&out.Attr)
	return n.NewInode(ctx, &metaDir{w: n.w}, gofs.StableAttr{Mode: syscall.S_IFDIR}), true
}

// originKey marks the contexts of a mount's own operations, so its
// watcher skips the changes the kernel already knows about.
type originKey struct{}

// ctx marks ctx as an operation of w, without its cancellation: a signal
// to the calling process interrupts the FUSE request (Go's runtime sends
// them all the time), and an operation stopped halfway would answer EINTR
// for a change that may have committed. Its changes are recorded in the
// audit log (and the change feed) as tools "fuse.<op>" by the calling
// uid.
func (w *ws) ctx(ctx context.Context) context.Context {
	actor := audit.Actor{Name: "fuse"}
	if c, ok := fuse.FromContext(ctx); ok {
		actor.Name = "uid " + strconv.FormatUint(uint64(c.Uid), 10)
	}
	ctx = audit.WithActor(audit.WithSurface(context.WithoutCancel(ctx), "fuse"), actor)
	// The kernel knows of the mount's deferred creations and removals
	// already: its requests see them without waiting for them.
	return context.WithValue(vfs.SeeDeferred(ctx), originKey{}, w)
}

// rootInode returns w's root inode.
func (w *ws) rootInode() *gofs.Inode {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.root
}

// errno maps err for op, logging errors outside the vocabulary.
func (w *ws) errno(op string, err error) syscall.Errno {
	e, known := errno(err)
	if !known {
		w.log.Warn("unexpected error", "op", op, "err", err)
	}
	return e
}

// owner maps a uid between the workspace and the host: a swap of 0 and
// id, so it is its own inverse.
func owner(u, id uint32) uint32 {
	switch {
	case id == 0:
		return u
	case u == 0:
		return id
	case u == id:
		return 0
	}
	return u
}

// ino is the mount's inode number of workspace inode ino.
func (w *ws) ino(ino uint64) uint64 {
	if ino == 0 {
		return 0
	}
	return ino | w.hi
}

// fill sets out from a vfs FileInfo.
func (w *ws) fill(fi fs.FileInfo, out *fuse.Attr) {
	out.Mode = unixMode(fi.Mode())
	out.Size = uint64(fi.Size())
	out.Blocks = (out.Size + 511) / 512
	out.Blksize = 4096
	out.Nlink = 1
	mtime := fi.ModTime()
	a, ok := fi.Sys().(*vfs.Attr)
	if !ok { // a virtual mount's entry
		out.Mode = virtualMode(fi.Mode())
		out.SetTimes(&mtime, &mtime, &mtime)
		return
	}
	out.Ino = w.ino(a.Ino)
	out.Nlink = a.Nlink
	out.Uid = owner(a.Uid, w.opts.UID)
	out.Gid = owner(a.Gid, w.opts.GID)
	out.Rdev = kernelDev(a.Rdev)
	out.SetTimes(&a.Atime, &a.Mtime, &a.Ctime)
}

// unixTypes pairs Unix file type bits with fs.FileMode type bits.
var unixTypes = []struct {
	unix uint32
	mode fs.FileMode
}{
	{syscall.S_IFDIR, fs.ModeDir}, {syscall.S_IFLNK, fs.ModeSymlink}, {syscall.S_IFIFO, fs.ModeNamedPipe},
	{syscall.S_IFSOCK, fs.ModeSocket}, {syscall.S_IFCHR, fs.ModeDevice | fs.ModeCharDevice}, {syscall.S_IFBLK, fs.ModeDevice},
}

// unixMode converts an fs.FileMode to Unix type and permission bits.
func unixMode(m fs.FileMode) uint32 {
	for _, t := range unixTypes {
		if m.Type() == t.mode {
			return t.unix | vfs.UnixMode(m)
		}
	}
	return syscall.S_IFREG | vfs.UnixMode(m)
}

// virtualMode is unixMode for an entry of a virtual mount: the daemon
// serves its bytes, so anything but a directory is a regular file (a
// device there, such as dev:'s zero, is not a device node the kernel
// would open itself on a nodev mount).
func virtualMode(m fs.FileMode) uint32 {
	if m.IsDir() {
		return syscall.S_IFDIR | vfs.UnixMode(m)
	}
	return syscall.S_IFREG | vfs.UnixMode(m)
}

// typeMode is the fs.FileMode type of Unix mode bits (0: a regular file
// or an unknown type).
func typeMode(mode uint32) fs.FileMode {
	for _, t := range unixTypes {
		if mode&syscall.S_IFMT == t.unix {
			return t.mode
		}
	}
	return 0
}

// kernelDev and vfsDev convert between the 32-bit device numbers FUSE
// carries (the kernel's new_encode_dev) and vfs.Attr.Rdev (unix.Mkdev's).
func kernelDev(rdev uint64) uint32 {
	major, minor := unix.Major(rdev), unix.Minor(rdev)
	return minor&0xff | major<<8 | (minor&^0xff)<<12
}

func vfsDev(dev uint32) uint64 {
	return unix.Mkdev(dev&0xfff00>>8, dev&0xff|dev>>12&0xfff00)
}

// fileMode converts Unix permission bits (setuid, setgid, sticky
// included) to an fs.FileMode.
func fileMode(mode uint32) fs.FileMode {
	m := fs.FileMode(mode & 0o777)
	if mode&syscall.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if mode&syscall.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if mode&syscall.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return m
}

// node is an inode of a mounted workspace. vfs is addressed by path, so a
// node finds its path by walking the kernel-visible tree to the
// workspace root (any link of a hard-linked file will do).
type node struct {
	gofs.Inode
	w *ws

	mu   sync.Mutex
	open map[*handle]struct{} // handles open for writing
	// opens counts the open handles, orph is set once n is removed
	// while open (orphan.go).
	opens atomic.Int32
	orph  atomic.Pointer[orphan]
	gen   uint64 // commits to n's contents through the mount (coherence.go; mu)
	// unsettled: Setattr deferred changes a close or fsync must make
	// durable.
	unsettled atomic.Bool
	// noCap is 1 + the w.xgen at which the file was seen without
	// security.capability (0: not seen): the kernel asks for it before
	// a file's first write and every chown, and it is almost never
	// there. It holds while w.xgen has not moved.
	noCap atomic.Uint64
}

var (
	_ gofs.NodeOnAdder       = (*node)(nil)
	_ gofs.NodeLookuper      = (*node)(nil)
	_ gofs.NodeGetattrer     = (*node)(nil)
	_ gofs.NodeSetattrer     = (*node)(nil)
	_ gofs.NodeOpener        = (*node)(nil)
	_ gofs.NodeCreater       = (*node)(nil)
	_ gofs.NodeReader        = (*node)(nil)
	_ gofs.NodeWriter        = (*node)(nil)
	_ gofs.NodeFlusher       = (*node)(nil)
	_ gofs.NodeFsyncer       = (*node)(nil)
	_ gofs.NodeReleaser      = (*node)(nil)
	_ gofs.NodeAllocater     = (*node)(nil)
	_ gofs.NodeMkdirer       = (*node)(nil)
	_ gofs.NodeMknoder       = (*node)(nil)
	_ gofs.NodeUnlinker      = (*node)(nil)
	_ gofs.NodeRmdirer       = (*node)(nil)
	_ gofs.NodeRenamer       = (*node)(nil)
	_ gofs.NodeLinker        = (*node)(nil)
	_ gofs.NodeSymlinker     = (*node)(nil)
	_ gofs.NodeReadlinker    = (*node)(nil)
	_ gofs.NodeReaddirer     = (*node)(nil)
	_ gofs.NodeGetxattrer    = (*node)(nil)
	_ gofs.NodeSetxattrer    = (*node)(nil)
	_ gofs.NodeRemovexattrer = (*node)(nil)
	_ gofs.NodeListxattrer   = (*node)(nil)
	_ gofs.NodeStatfser      = (*node)(nil)
)

// asNode returns the node of a workspace's inode (nil for the root of
// MountAll).
func asNode(e gofs.InodeEmbedder) *node {
	switch v := e.(type) {
	case *node:
		return v
	case *single:
		return &v.node
	}
	return nil
}

// OnAdd is called for the root of a single-workspace mount: it becomes
// the workspace root and the watch starts.
func (n *node) OnAdd(ctx context.Context) {
	if n.IsRoot() {
		n.w.attach(&n.Inode)
	}
}

// path returns n's path in the workspace; a node no longer linked in the
// tree is fs.ErrNotExist.
func (n *node) path() (string, error) {
	root := n.w.rootInode()
	var segs []string
	for p := &n.Inode; p != root; {
		name, parent := p.Parent()
		if parent == nil {
			return "", fs.ErrNotExist
		}
		segs = append(segs, name)
		p = parent
	}
	if len(segs) == 0 {
		return ".", nil
	}
	for i, j := 0, len(segs)-1; i < j; i, j = i+1, j-1 {
		segs[i], segs[j] = segs[j], segs[i]
	}
	return strings.Join(segs, "/"), nil
}

// entry adds the inode fi describes as child of n and fills out.
// The inode the kernel already knows under that name is reused when it
// is the same file: go-fuse keeps it over a new one anyway, and the
// handles open on the file are tracked on it. A file an open handle has
// written to takes its size and times from that handle, writes not
// committed yet included: a lookup must not shrink what the kernel knows
// of the file (git's index-pack read 0 bytes of the pack it was writing
// once a lookup after a cache drop had reported the committed size).
func (n *node) entry(ctx context.Context, fi fs.FileInfo, out *fuse.EntryOut) *gofs.Inode {
	n.w.fill(fi, &out.Attr)
	id := gofs.StableAttr{Mode: out.Attr.Mode & syscall.S_IFMT, Ino: out.Attr.Ino}
	in := n.GetChild(fi.Name())
	if in == nil || in.StableAttr() != id {
		in = n.NewInode(ctx, &node{w: n.w}, id)
	}
	if ch := asNode(in.Operations()); ch != nil {
		if h := ch.writer(); h != nil {
			if fi, err := h.f.Stat(); err == nil {
				var a fuse.Attr
				n.w.fill(fi, &a)
				out.Attr.Size, out.Attr.Blocks = a.Size, a.Blocks
				out.Attr.Mtime, out.Attr.Mtimensec, out.Attr.Ctime, out.Attr.Ctimensec = a.Mtime, a.Mtimensec, a.Ctime, a.Ctimensec
			}
		}
	}
	return in
}

// creator marks ctx so the inodes an operation creates are owned by the
// caller (mapped to the workspace's owners), or, in a setgid directory,
// take its group, a new directory there setgid too (vfs.WithOwner).
func (n *node) creator(ctx context.Context) context.Context {
	var uid, gid uint32
	if c, ok := fuse.FromContext(ctx); ok {
		uid, gid = owner(c.Uid, n.w.opts.UID), owner(c.Gid, n.w.opts.GID)
	}
	return vfs.WithOwner(ctx, uid, gid)
}

// created finishes the creation of entry p in directory n (made under
// creator's context): its attributes fill out.
func (n *node) created(ctx context.Context, p string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	fi, err := n.w.fs.Lstat(ctx, p)
	if err != nil {
		return nil, n.w.errno("lstat", err)
	}
	return n.entry(ctx, fi, out), 0
}

// at starts an operation on n: its context (ws.ctx) and path; write
// fails with EROFS first on a read-only mount; a node no longer in the
// tree is ENOENT.
func (n *node) at(ctx context.Context, write bool) (context.Context, string, syscall.Errno) {
	if write {
		if e := n.writable(); e != 0 {
			return nil, "", e
		}
	}
	p, err := n.path()
	if err != nil {
		return nil, "", syscall.ENOENT
	}
	return n.w.ctx(ctx), p, 0
}

// atChild is at for entry name of directory n.
func (n *node) atChild(ctx context.Context, name string, write bool) (context.Context, string, syscall.Errno) {
	ctx, p, e := n.at(ctx, write)
	if e != 0 || p == "." {
		return ctx, name, e
	}
	return ctx, p + "/" + name, 0
}

// writable fails with EROFS on a read-only mount.
func (n *node) writable() syscall.Errno {
	if n.w.ro {
		return syscall.EROFS
	}
	return 0
}

func (n *node) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	ctx, p, e := n.atChild(ctx, name, false)
	if e != 0 {
		return nil, e
	}
	fi, err := n.w.fs.Lstat(ctx, p)
	if errors.Is(err, fs.ErrNotExist) {
		if in, ok := n.metaDir(ctx, name, out); ok {
			return in, 0
		}
	}
	if err != nil {
		return nil, n.w.errno("lookup", err)
	}
	return n.entry(ctx, fi, out), 0
}

func (n *node) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	ctx = n.w.ctx(ctx)
	// A handle that has written knows the file's size, writes not
	// committed yet included; another descriptor's would not.
	h := n.writer()
	if h == nil {
		h, _ = fh.(*handle)
		if h != nil && h.wrote.Load() && n.orph.Load() == nil {
			// Its buffer may be older than another commit (coherence.go).
			if err := n.current(h); err != nil {
				return n.w.errno("fstat", err)
			}
		}
	}
	if o := n.orph.Load(); o != nil {
		if h != nil {
			h = n.carrier(h, false)
		}
		return n.orphanAttr(o, h, &out.Attr)
	}
	if h != nil {
		fi, err := h.f.Stat()
		if err != nil {
			return n.w.errno("fstat", err)
		}
		n.w.fill(fi, &out.Attr)
		if _, parent := n.Parent(); parent == nil && !n.IsRoot() {
			out.Nlink = 0 // unlinked while open
		}
		return 0
	}
	p, err := n.path()
	if err != nil {
		return syscall.ENOENT
	}
	fi, err := n.w.fs.Lstat(ctx, p)
	if err != nil {
		return n.w.errno("stat", err)
	}
	n.w.fill(fi, &out.Attr)
	return 0
}

// writer returns a handle of n that has written (its size includes
// writes not committed yet), or nil.
func (n *node) writer() *handle {
	n.mu.Lock()
	defer n.mu.Unlock()
	// The handle with writes not committed yet, if any; else one that
	// wrote and is current (coherence.go): another is stale.
	var current *handle
	for h := range n.open {
		if h.dirty.Load() {
			return h
		}
		if current == nil && h.wrote.Load() && h.seen == n.gen {
			current = h
		}
	}
	return current
}

// wroteHandles returns n's open handles but except that have written.
func (n *node) wroteHandles(except *handle) []*handle {
	n.mu.Lock()
	defer n.mu.Unlock()
	var hs []*handle // every read asks: no allocation unless another handle wrote
	for h := range n.open {
		if h != except && h.wrote.Load() {
			hs = append(hs, h)
		}
	}
	return hs
}

// syncWriters commits the writes of n's open handles but except (nil:
// all of them). A poisoned handle (vfs.File.Poisoned: a refused write
// discarded its writes) has nothing to commit, and its failure is for
// its own descriptors: the others read the committed contents. It stays
// open until the kernel's RELEASE, which comes after its close(2)
// returned, asynchronously: a read after that close may come first.
func (n *node) syncWriters(except *handle) error {
	for _, h := range n.wroteHandles(except) {
		if err := h.f.Flush(); err != nil && !h.f.Poisoned() {
			return err
		}
		n.afterCommit(h)
	}
	return nil
}

// Setattr sets what in asks. Times, owner and mode do not wait for their
// own transactions (vfs.WithDeferredCommit, docs/decisions/032): they
// commit with the next change of the workspace, at the close of a
// descriptor of the file open for writing or an fsync (Flush and Fsync
// settle them), or
// 10 ms later, like a create or an unlink (decision 026). On a file open
// for writing (tar sets times, owner and mode on the descriptor it wrote
// before closing it) they queue behind the handles' writes, staged first
// so their commit does not set the times again, and the close carries
// the whole; tar's directories take theirs with the next file's close. A
// size (truncate) commits at once.
func (n *node) Setattr(ctx context.Context, fh gofs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	ctx = n.w.ctx(ctx)
	if e := n.writable(); e != 0 {
		return e
	}
	p, perr := n.path()
	h, _ := fh.(*handle)
	if o := n.orph.Load(); o != nil && perr != nil {
		return n.setOrphan(o, h, in, out)
	}
	if perr != nil && h == nil {
		return syscall.ENOENT
	}
	fsys := n.w.fs
	actx := vfs.WithDeferredCommit(ctx)
	n.unsettled.Store(true)
	if mode, ok := in.GetMode(); ok && perr == nil {
		if err := fsys.Chmod(actx, p, fileMode(mode)); err != nil {
			return n.w.errno("chmod", err)
		}
	}
	uid, uok := in.GetUID()
	gid, gok := in.GetGID()
	if (uok || gok) && perr == nil {
		u, g := -1, -1
		if uok {
			u = int(owner(uid, n.w.opts.UID))
		}
		if gok {
			g = int(owner(gid, n.w.opts.GID))
		}
		if err := fsys.Lchown(actx, p, u, g); err != nil {
			return n.w.errno("chown", err)
		}
	}
	if size, ok := in.GetSize(); ok {
		var err error
		switch {
		case h != nil:
			if err = n.beforeWrite(h); err == nil {
				err = h.f.Truncate(int64(size))
				h.wrote.Store(true)
				h.dirty.Store(true)
			}
		case fsys.IsVirtual(p):
			err = truncateVirtual(ctx, fsys, p, int64(size))
		default:
			// After the writes open descriptors made, which would
			// otherwise bring the cut bytes back (coherence.go).
			if err = n.flushOthers(nil); err == nil {
				err = fsys.Truncate(ctx, p, int64(size))
				n.committed(nil)
			}
		}
		if err != nil {
			return n.w.errno("truncate", err)
		}
	}
	atime, aok := in.GetATime()
	mtime, mok := in.GetMTime()
	if (aok || mok) && perr == nil {
		// Commit open writes first, so their commit's mtime does not
		// override the one set here (cp -p and tar set times before
		// closing).
		if err := n.stageWriters(); err != nil {
			return n.w.errno("sync", err)
		}
		if err := fsys.Lchtimes(actx, p, atime, mtime); err != nil {
			return n.w.errno("chtimes", err)
		}
	}
	// A chown of a file, or a truncate, fallocate or write by a caller
	// without CAP_FSETID (killpriv.go).
	if killSetattr(in) && perr == nil {
		var fi fs.FileInfo
		var err error
		if h != nil {
			fi, err = h.f.Stat()
		} else {
			fi, err = fsys.Lstat(ctx, p)
		}
		if err == nil {
			err = n.kill(ctx, p, fi, false)
		}
		if err != nil {
			return n.w.errno("chmod", err)
		}
	}
	if e := n.Getattr(ctx, fh, out); e != 0 {
		return e
	}
	// What the reply says is what the kernel may keep, as after a
	// GETATTR (go-fuse leaves a SETATTR's reply at 0: the next stat, or
	// a chown's check of the mode, would ask again) — unless writes not
	// committed yet (an ftruncate's included) will change its times when
	// they are.
	if len(n.dirtyHandles(nil)) == 0 {
		out.SetTimeout(n.w.opts.cacheTimeout())
	}
	return 0
}

// stageWriters stages the writes of n's open handles (vfs.File.Stage):
// committed behind what is queued, durable by their close. A poisoned
// handle has nothing to stage (syncWriters).
func (n *node) stageWriters() error {
	for _, h := range n.wroteHandles(nil) {
		if err := h.f.Stage(); err != nil && !h.f.Poisoned() {
			return err
		}
		n.afterCommit(h)
	}
	return nil
}

func (n *node) Readlink(ctx context.Context) ([]byte, syscall.Errno) {
	ctx, p, e := n.at(ctx, false)
	if e != 0 {
		return nil, e
	}
	target, err := n.w.fs.Readlink(ctx, p)
	if err != nil {
		return nil, n.w.errno("readlink", err)
	}
	return []byte(target), 0
}

func (n *node) Readdir(ctx context.Context) (gofs.DirStream, syscall.Errno) {
	ctx, p, e := n.at(ctx, false)
	if e != 0 {
		return nil, e
	}
	ents, err := n.w.fs.ReadDir(ctx, p)
	if err != nil {
		return nil, n.w.errno("readdir", err)
	}
	out := dots(len(ents))
	for _, e := range ents {
		d := fuse.DirEntry{Name: e.Name(), Mode: virtualMode(e.Type()) &^ 0o7777}
		if i, ok := e.(interface{ Ino() uint64 }); ok { // stored, not virtual
			d.Mode, d.Ino = unixMode(e.Type())&^0o7777, n.w.ino(i.Ino())
		}
		out = append(out, d)
	}
	return gofs.NewListDirStream(out), 0
}

func (n *node) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	ctx, p, e := n.atChild(ctx, name, true)
	if e != 0 {
		return nil, e
	}
	if err := n.w.fs.Mkdir(vfs.WithDeferredCommit(n.creator(ctx)), p, fileMode(mode)); err != nil {
		return nil, n.w.errno("mkdir", err)
	}
	return n.created(ctx, p, out)
}

// Mknod creates FIFOs, sockets, devices and regular files (vfs.Mknod);
// the kernel implements what opening a special file does.
func (n *node) Mknod(ctx context.Context, name string, mode uint32, dev uint32, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	typ := typeMode(mode)
	if typ == 0 && mode&syscall.S_IFMT != syscall.S_IFREG && mode&syscall.S_IFMT != 0 {
		return nil, syscall.EINVAL
	}
	if typ&(fs.ModeDir|fs.ModeSymlink) != 0 {
		return nil, syscall.EINVAL // mkdir and symlink make those
	}
	ctx, p, e := n.atChild(ctx, name, true)
	if e != 0 {
		return nil, e
	}
	if err := n.w.fs.Mknod(vfs.WithDeferredCommit(n.creator(ctx)), p, typ|fileMode(mode), vfsDev(dev)); err != nil {
		return nil, n.w.errno("mknod", err)
	}
	return n.created(ctx, p, out)
}

func (n *node) Symlink(ctx context.Context, target, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	ctx, p, e := n.atChild(ctx, name, true)
	if e != 0 {
		return nil, e
	}
	if err := n.w.fs.Symlink(vfs.WithDeferredCommit(n.creator(ctx)), target, p); err != nil {
		return nil, n.w.errno("symlink", err)
	}
	return n.created(ctx, p, out)
}

func (n *node) Link(ctx context.Context, target gofs.InodeEmbedder, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	t := asNode(target)
	if t == nil || t.w != n.w {
		return nil, syscall.EXDEV
	}
	_, old, e := t.at(ctx, false)
	if e != 0 {
		return nil, e
	}
	ctx, p, e := n.atChild(ctx, name, true)
	if e != 0 {
		return nil, e
	}
	if err := n.w.fs.Link(ctx, old, p); err != nil {
		return nil, n.w.errno("link", err)
	}
	fi, err := n.w.fs.Lstat(ctx, p)
	if err != nil {
		return nil, n.w.errno("lstat", err)
	}
	return n.entry(ctx, fi, out), 0
}

func (n *node) Unlink(ctx context.Context, name string) syscall.Errno {
	return n.remove(ctx, "unlink", name)
}

func (n *node) Rmdir(ctx context.Context, name string) syscall.Errno {
	return n.remove(ctx, "rmdir", name)
}

// remove does not wait for the removal to be durable
// (vfs.WithDeferredCommit): it commits with the next change, read or
// fsync of the workspace, or a moment later, so a program removing many
// files pays a transaction for several.
func (n *node) remove(ctx context.Context, op, name string) syscall.Errno {
	ctx, p, e := n.atChild(ctx, name, true)
	if e != 0 {
		return e
	}
	ch, fi := n.removing(ctx, name, p)
	if err := n.w.fs.Remove(vfs.WithDeferredCommit(ctx), p); err != nil {
		return n.w.errno(op, err)
	}
	if ch != nil {
		ch.removed(fi)
	}
	return 0
}

// Rename supports RENAME_NOREPLACE and RENAME_EXCHANGE; RENAME_WHITEOUT
// is EINVAL. Between two workspaces of one mount it is EXDEV.
func (n *node) Rename(ctx context.Context, name string, newParent gofs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	np := asNode(newParent)
	if np == nil || np.w != n.w {
		return syscall.EXDEV
	}
	if flags&^uint32(renameNoReplace|renameExchange) != 0 || flags == renameNoReplace|renameExchange {
		return syscall.EINVAL
	}
	_, p, e := np.atChild(ctx, newName, true)
	if e != 0 {
		return e
	}
	ctx, old, e := n.atChild(ctx, name, true)
	if e != 0 {
		return e
	}
	// A file replaced while open is an orphan (orphan.go); not when the
	// two names are links of one file, which rename leaves alone.
	var (
		ch  *node
		cfi fs.FileInfo
	)
	if flags == 0 && np.GetChild(newName) != n.GetChild(name) {
		ch, cfi = np.removing(ctx, newName, p)
	}
	var err error
	switch flags {
	case renameNoReplace:
		err = n.w.fs.RenameNoReplace(ctx, old, p)
	case renameExchange:
		err = n.w.fs.RenameExchange(ctx, old, p)
	default:
		err = n.w.fs.Rename(ctx, old, p)
	}
	if err != nil {
		return n.w.errno("rename", err)
	}
	if ch != nil {
		ch.removed(cfi)
	}
	return 0
}

// renameat2(2) flags.
const (
	renameNoReplace = 1
	renameExchange  = 2
)

func (n *node) Statfs(ctx context.Context, out *fuse.StatfsOut) syscall.Errno {
	ctx = n.w.ctx(ctx)
	u, err := n.w.fs.Usage(ctx)
	if err != nil {
		return n.w.errno("statfs", err)
	}
	statfs(out, n.w.fs.Quota().MaxBytes, n.w.fs.Quota().MaxEntries, u.Bytes, u.Entries)
	return 0
}

// unlimited is the capacity statfs shows for a dimension without quota.
const unlimited = 1 << 50

// bsize is the block size statfs reports.
const bsize = 4096

// statfs fills out from a quota (0: none) and the usage.
func statfs(out *fuse.StatfsOut, maxBytes, maxEntries, bytes, entries int64) {
	if maxBytes <= 0 {
		maxBytes = bytes + unlimited
	}
	if maxEntries <= 0 {
		maxEntries = entries + unlimited
	}
	out.Bsize, out.Frsize, out.NameLen = bsize, bsize, vfs.MaxNameLen
	out.Blocks = uint64(maxBytes+bsize-1) / bsize
	free := uint64(max(maxBytes-bytes, 0)) / bsize
	out.Bfree, out.Bavail = free, free
	out.Files = uint64(maxEntries)
	out.Ffree = uint64(max(maxEntries-entries, 0))
}

// Extended attributes. A missing attribute is ENODATA; a buffer too small
// for the value or the list is ERANGE (with the size needed), an empty
// buffer asks for the size.

func (n *node) Getxattr(ctx context.Context, attr string, dest []byte) (uint32, syscall.Errno) {
	capability := attr == capabilityXattr
	gen := n.w.xgen.Load()
	if capability && n.noCap.Load() == gen+1 {
		return 0, syscall.ENODATA
	}
	ctx, p, e := n.at(ctx, false)
	if e != 0 {
		return 0, e
	}
	v, err := n.w.fs.Getxattr(ctx, p, attr)
	if err != nil {
		if capability && errors.Is(err, fs.ErrNotExist) {
			n.noCap.Store(gen + 1) // gen as before the read: a change since moved it
		}
		return 0, n.xattrErrno("getxattr", err)
	}
	return sized(dest, v)
}

// capabilityXattr is the attribute the kernel reads before a file's
// first write and before every chown (file capabilities).
const capabilityXattr = "security.capability"

// sized copies v into dest following the xattr size protocol.
func sized(dest, v []byte) (uint32, syscall.Errno) {
	switch {
	case len(dest) == 0:
		return uint32(len(v)), 0
	case len(dest) < len(v):
		return uint32(len(v)), syscall.ERANGE
	}
	return uint32(copy(dest, v)), 0
}

// xattrErrno maps a missing attribute to ENODATA.
func (n *node) xattrErrno(op string, err error) syscall.Errno {
	if errors.Is(err, fs.ErrNotExist) {
		return syscall.ENODATA
	}
	return n.w.errno(op, err)
}

// Setxattr honours XATTR_CREATE (EEXIST when present) and XATTR_REPLACE
// (ENODATA when missing), checked just before the write.
func (n *node) Setxattr(ctx context.Context, attr string, data []byte, flags uint32) syscall.Errno {
	ctx, p, e := n.at(ctx, true)
	if e != 0 {
		return e
	}
	if flags&(xattrCreate|xattrReplace) != 0 {
		_, err := n.w.fs.Getxattr(ctx, p, attr)
		switch {
		case err == nil && flags&xattrCreate != 0:
			return syscall.EEXIST
		case errors.Is(err, fs.ErrNotExist) && flags&xattrReplace != 0:
			return syscall.ENODATA
		case err != nil && !errors.Is(err, fs.ErrNotExist):
			return n.w.errno("getxattr", err)
		}
	}
	err := n.w.fs.Setxattr(ctx, p, attr, data)
	n.w.xgen.Add(1) // once set (node.noCap), whatever the outcome
	if err != nil {
		if errors.Is(err, fs.ErrInvalid) && len(data) > vfs.MaxXattrValue {
			return syscall.E2BIG
		}
		return n.w.errno("setxattr", err)
	}
	return 0
}

// setxattr(2) flags.
const (
	xattrCreate  = 1
	xattrReplace = 2
)

func (n *node) Removexattr(ctx context.Context, attr string) syscall.Errno {
	ctx, p, e := n.at(ctx, true)
	if e != 0 {
		return e
	}
	if err := n.w.fs.Removexattr(ctx, p, attr); err != nil {
		return n.xattrErrno("removexattr", err)
	}
	return 0
}

func (n *node) Listxattr(ctx context.Context, dest []byte) (uint32, syscall.Errno) {
	ctx, p, e := n.at(ctx, false)
	if e != 0 {
		return 0, e
	}
	names, err := n.w.fs.Listxattr(ctx, p)
	if err != nil {
		return 0, n.w.errno("listxattr", err)
	}
	var b []byte
	for _, name := range names {
		b = append(append(b, name...), 0)
	}
	return sized(dest, b)
}
