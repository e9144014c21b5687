package fusefs

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"sync/atomic"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/forkspace/forkspace/vfs"
)

// handle is an open file of a mount: a vfs handle, which buffers writes
// until Flush (close(2)) or Fsync commits them durably.
type handle struct {
	f      file
	append bool        // O_APPEND: every write goes to the end
	wrote  atomic.Bool // written since opened (its size is the file's)
	dirty  atomic.Bool // holds writes not committed yet (coherence.go)
	seen   uint64      // node.gen h is current with (node.mu)
}

// openFlags keeps the open(2) flags vfs handles.
func openFlags(flags uint32) int {
	return int(flags) & (vfs.O_RDONLY | vfs.O_WRONLY | vfs.O_RDWR | vfs.O_APPEND | vfs.O_TRUNC)
}

// fileFlags are openFlags for a vfs file (not a virtual one): a
// write-only open opens it for reading too. The kernel holds the
// descriptor to its access mode, and the file of an orphan's writer
// serves its other descriptors' reads (orphan.go).
func fileFlags(flags uint32) int {
	f := openFlags(flags)
	if f&(vfs.O_WRONLY|vfs.O_RDWR) == vfs.O_WRONLY {
		f = f&^vfs.O_WRONLY | vfs.O_RDWR
	}
	return f
}

// writes reports whether flags open for writing.
func writes(flags uint32) bool {
	return int(flags)&(vfs.O_WRONLY|vfs.O_RDWR) != 0
}

// track records h as open on n when it may write.
func (n *node) track(h *handle, flags uint32) {
	if !writes(flags) {
		return
	}
	n.mu.Lock()
	if n.open == nil {
		n.open = map[*handle]struct{}{}
	}
	n.open[h] = struct{}{}
	h.seen = n.gen
	n.mu.Unlock()
}

// fopen are the FOPEN flags of every open: the kernel keeps its page
// cache across opens; changes from other surfaces invalidate it.
const fopen = fuse.FOPEN_KEEP_CACHE

// fopenRead are those of an open for reading only: its close(2) sends
// no FLUSH (Linux 5.16 and later). Such a handle has nothing to commit,
// and POSIX locks, which a FLUSH would carry the owner of, stay in the
// kernel (MountOptions.EnableLocks is off): were they served here, the
// FLUSH would have to stay.
const fopenRead = fopen | fuse.FOPEN_NOFLUSH

func (n *node) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	ctx, p, e := n.at(ctx, writes(flags) || flags&syscall.O_TRUNC != 0)
	if e != 0 {
		return nil, 0, e
	}
	if n.w.fs.IsVirtual(p) {
		// Served live: no page cache, and sizes may say nothing (a
		// device shows 0 bytes).
		v, err := openVirtual(ctx, n.w.fs, p, openFlags(flags))
		if err != nil {
			return nil, 0, n.w.errno("open", err)
		}
		n.opens.Add(1)
		return &handle{f: v, append: flags&syscall.O_APPEND != 0}, fuse.FOPEN_DIRECT_IO, 0
	}
	trunc := flags&syscall.O_TRUNC != 0
	if trunc {
		// The writes other descriptors made come before the truncate.
		if err := n.flushOthers(nil); err != nil {
			return nil, 0, n.w.errno("open", err)
		}
	}
	f, err := n.w.fs.OpenFile(ctx, p, fileFlags(flags), 0)
	if err != nil {
		return nil, 0, n.w.errno("open", err)
	}
	if trunc {
		n.committed(nil)
	}
	h := &handle{f: f, append: flags&syscall.O_APPEND != 0}
	n.track(h, flags)
	n.opens.Add(1)
	if !writes(flags) && flags&syscall.O_TRUNC == 0 {
		return h, fopenRead, 0
	}
	return h, fopen, 0
}

func (n *node) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*gofs.Inode, gofs.FileHandle, uint32, syscall.Errno) {
	rawCtx := ctx
	ctx, p, e := n.atChild(ctx, name, true)
	if e != 0 {
		return nil, nil, 0, e
	}
	gen := n.w.xgen.Load() // before the file exists (node.noCap)
	// The new inode commits with the handle's first commit (its close,
	// for a small file): one transaction for the file, not two.
	cctx := vfs.WithDeferredCommit(n.creator(ctx))
	oflags := fileFlags(flags) | vfs.O_CREATE
	// The kernel sends CREATE for a name it found missing: the file is
	// made exclusively first, so this call knows whether it made it; a
	// name that exists after all (made through another surface
	// meanwhile, or a symbolic link, which O_CREAT follows) is opened as
	// asked unless the caller asked for O_EXCL too.
	made := true
	f, err := n.w.fs.OpenFile(cctx, p, oflags|vfs.O_EXCL, fileMode(mode))
	if errors.Is(err, fs.ErrExist) && flags&syscall.O_EXCL == 0 {
		made = false
		f, err = n.w.fs.OpenFile(cctx, p, oflags, fileMode(mode))
	}
	if err != nil {
		return nil, nil, 0, n.w.errno("create", err)
	}
	fi, err := f.Stat()
	if err == nil && !made && killAsked(rawCtx) && fileMode(mode)&(fs.ModeSetuid|fs.ModeSetgid) == 0 {
		// O_TRUNC of a file that existed (killpriv.go): bits the new
		// mode did not ask for were the old file's (a file O_CREAT made
		// at the end of a symbolic link has the mode asked).
		if err = n.kill(ctx, p, fi, false); err == nil {
			fi, err = f.Stat()
		}
	}
	if err != nil {
		_ = f.Close()
		return nil, nil, 0, n.w.errno("create", err)
	}
	ch := n.entry(ctx, fi, out)
	h := &handle{f: f, append: flags&syscall.O_APPEND != 0}
	cn := asNode(ch.Operations())
	cn.track(h, flags|syscall.O_WRONLY)
	cn.opens.Add(1)
	if made {
		// A file this call made has no extended attributes: the
		// kernel's question before its first write needs no lookup.
		cn.noCap.Store(gen + 1)
	}
	return ch, h, fopen, 0
}

func (n *node) Read(ctx context.Context, fh gofs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	h, ok := fh.(*handle)
	if !ok {
		return nil, syscall.EBADF
	}
	// What other descriptors wrote is visible to this one at once, as
	// POSIX has it: their writes are committed first (git's index-pack
	// reads the pack it is writing through descriptors of its own).
	if err := n.syncWriters(h); err != nil {
		return nil, n.w.errno("read", err)
	}
	if n.orph.Load() != nil {
		h = n.carrier(h, false) // removed while open: one file for all
	} else if h.wrote.Load() {
		if err := n.current(h); err != nil {
			return nil, n.w.errno("read", err)
		}
	}
	k, err := h.f.ReadAt(dest, off)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, n.w.errno("read", err)
	}
	return fuse.ReadResultData(dest[:k]), 0
}

func (n *node) Write(ctx context.Context, fh gofs.FileHandle, data []byte, off int64) (uint32, syscall.Errno) {
	h, ok := fh.(*handle)
	if !ok {
		return 0, syscall.EBADF
	}
	var (
		k   int
		err error
	)
	app := h.append
	if n.orph.Load() != nil {
		// Removed while open: one file carries the data of all its
		// descriptors (orphan.go).
		if c := n.carrier(h, true); c != h && (app || !c.append) {
			h = c
		}
	} else if err := n.beforeWrite(h); err != nil {
		return 0, n.w.errno("write", err)
	}
	switch {
	case app && h.append:
		k, err = h.f.Write(data)
	case app:
		var fi fs.FileInfo
		if fi, err = h.f.Stat(); err == nil {
			k, err = h.f.WriteAt(data, fi.Size())
		}
	default:
		k, err = h.f.WriteAt(data, off)
	}
	h.wrote.Store(true)
	h.dirty.Store(true)
	if err != nil {
		return uint32(k), n.w.errno("write", err)
	}
	if killAsked(ctx) { // a caller without CAP_FSETID (killpriv.go)
		if err := n.killOpen(n.w.ctx(ctx), h); err != nil {
			return uint32(k), n.w.errno("chmod", err)
		}
	}
	return uint32(k), 0
}

// killOpen clears setuid and setgid of n, open as h, for a write
// (killpriv.go). A file unlinked while open has no path left:
// nothing can execute it.
func (n *node) killOpen(ctx context.Context, h *handle) error {
	fi, err := h.f.Stat()
	if err != nil {
		return err
	}
	if _, ok := killed(fi.Mode()); !ok {
		return nil
	}
	p, err := n.path()
	if err != nil {
		return nil
	}
	return n.kill(ctx, p, fi, true)
}

// Flush (every close(2) of a descriptor open for writing: fopenRead)
// commits the handle's writes: when close returns, they are visible to
// every other surface and survive the death of the process; fsync(2)
// makes them survive a power loss (docs/decisions/021).
func (n *node) Flush(ctx context.Context, fh gofs.FileHandle) syscall.Errno {
	h, ok := fh.(*handle)
	if !ok {
		return 0 // a directory: its changes are committed already
	}
	if err := h.f.Flush(); err != nil {
		return n.w.errno("flush", err)
	}
	n.afterCommit(h)
	// Attributes set on the file were deferred (Setattr), behind the
	// handle's writes if any: they are durable when close returns.
	if n.unsettled.Swap(false) {
		if err := n.w.fs.Settle(n.w.ctx(ctx)); err != nil {
			return n.w.errno("flush", err)
		}
	}
	return 0
}

// Fsync commits like Flush, then waits for the disk (fdatasync too: vfs
// commits data and attributes in one transaction). On a directory it
// waits for the store's earlier commits.
func (n *node) Fsync(ctx context.Context, fh gofs.FileHandle, flags uint32) syscall.Errno {
	h, ok := fh.(*handle)
	if !ok {
		if err := n.w.fs.Sync(n.w.ctx(ctx)); err != nil {
			return n.w.errno("fsync", err)
		}
		return 0
	}
	// The file's deferred attributes (Setattr) commit first; the
	// handle's sync then waits for the disk, theirs included.
	if n.unsettled.Swap(false) {
		if err := n.w.fs.Settle(n.w.ctx(ctx)); err != nil {
			return n.w.errno("fsync", err)
		}
	}
	if err := h.f.Sync(); err != nil {
		return n.w.errno("fsync", err)
	}
	n.afterCommit(h)
	return 0
}

func (n *node) Release(ctx context.Context, fh gofs.FileHandle) syscall.Errno {
	h, ok := fh.(*handle)
	if !ok {
		return 0
	}
	n.mu.Lock()
	delete(n.open, h)
	n.mu.Unlock()
	n.opens.Add(-1)
	if n.releaseOrphan(h) {
		return 0 // carries the data of the orphan's other descriptors
	}
	// Flush committed (and reported) the writes; what a failed Flush
	// kept buffered is discarded here, as its error said.
	_ = h.f.Close()
	return 0
}

// Allocate serves fallocate(2) mode 0 (grow the file: the new range reads
// as zeros, counted against the quota) and FALLOC_FL_KEEP_SIZE (nothing
// to reserve); other modes are EOPNOTSUPP.
func (n *node) Allocate(ctx context.Context, fh gofs.FileHandle, off uint64, size uint64, mode uint32) syscall.Errno {
	h, ok := fh.(*handle)
	if !ok {
		return syscall.EBADF
	}
	if n.orph.Load() != nil {
		h = n.carrier(h, true) // removed while open (orphan.go)
	} else if err := n.beforeWrite(h); err != nil {
		return n.w.errno("fallocate", err)
	}
	switch mode {
	case 0:
	case fallocKeepSize:
		return 0
	default:
		return syscall.EOPNOTSUPP
	}
	fi, err := h.f.Stat()
	if err != nil {
		return n.w.errno("fallocate", err)
	}
	if end := int64(off + size); end > fi.Size() {
		h.wrote.Store(true)
		h.dirty.Store(true)
		if err := h.f.Truncate(end); err != nil {
			return n.w.errno("fallocate", err)
		}
	}
	return 0
}

// fallocKeepSize is FALLOC_FL_KEEP_SIZE.
const fallocKeepSize = 1
