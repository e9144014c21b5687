package fusefs

import (
	"context"
	"io/fs"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
)

// A file or directory removed while open lives on until its last close,
// as POSIX has it. vfs forgets it at once: its handles keep the contents
// they last saw and their later commits are dropped (vfs.File). So that
// the descriptors still open behave as on a local file system, the mount
// keeps, for such an orphan, what vfs no longer can:
//
//   - its attributes at removal (one Lstat, made only when the removed
//     node is open, or is a directory), changed by later Setattr calls
//     (fchmod, fchown, futimens of an unlinked file): fstat reports them
//     with nlink 0;
//   - one handle that carries its data (the sink): every descriptor's
//     reads and writes go to it, so what one writes the others read, and
//     it stays open until the last descriptor closes.

// orphan is what a node keeps once removed while open.
type orphan struct {
	attr fuse.Attr // at removal, with Setattr's changes since
	set  uint32    // the FATTR_* fields Setattr changed since
	sink *handle   // carries the data (nil until a descriptor writes)
	kept bool      // sink's own descriptor has closed
}

// removing returns the attributes of child p of n, which an op is about
// to remove or replace, when the node the kernel holds for it will need
// them (it is open, or a directory); otherwise nil.
func (n *node) removing(ctx context.Context, name, p string) (*node, fs.FileInfo) {
	in := n.GetChild(name)
	if in == nil {
		return nil, nil
	}
	ch := asNode(in.Operations())
	if ch == nil || (ch.opens.Load() == 0 && !in.IsDir()) {
		return nil, nil
	}
	fi, err := n.w.fs.Lstat(ctx, p)
	if err != nil {
		return nil, nil
	}
	return ch, fi
}

// removed records that n lost a link whose attributes were fi: with it
// its last, n is an orphan.
func (n *node) removed(fi fs.FileInfo) {
	var a fuse.Attr
	n.w.fill(fi, &a)
	if a.Nlink > 1 && a.Mode&syscall.S_IFMT != syscall.S_IFDIR {
		return // still linked elsewhere
	}
	n.orph.Store(&orphan{attr: a})
}

// carrier returns the handle whose file carries orphan n's data for an
// operation through h: the sink, chosen on first need among the handles
// that have written, else h itself when it may write.
func (n *node) carrier(h *handle, write bool) *handle {
	o := n.orph.Load()
	if o == nil {
		return h
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if o.sink == nil {
		for w := range n.open {
			if w.wrote.Load() {
				o.sink = w
				break
			}
		}
		if o.sink == nil && write {
			o.sink = h
		}
	}
	if o.sink == nil {
		return h
	}
	return o.sink
}

// orphanAttr fills out for orphan o from h's file (size and data times,
// when h is not nil) and what o holds.
func (n *node) orphanAttr(o *orphan, h *handle, out *fuse.Attr) syscall.Errno {
	n.mu.Lock()
	a, set := o.attr, o.set
	n.mu.Unlock()
	if h != nil {
		fi, err := h.f.Stat()
		if err != nil {
			return n.w.errno("fstat", err)
		}
		var b fuse.Attr
		n.w.fill(fi, &b)
		a.Size, a.Blocks = b.Size, b.Blocks
		if set&fuse.FATTR_MTIME == 0 && (b.Mtime > a.Mtime || b.Mtime == a.Mtime && b.Mtimensec > a.Mtimensec) {
			a.Mtime, a.Mtimensec = b.Mtime, b.Mtimensec
		}
		if b.Ctime > a.Ctime || b.Ctime == a.Ctime && b.Ctimensec > a.Ctimensec {
			a.Ctime, a.Ctimensec = b.Ctime, b.Ctimensec
		}
	}
	a.Nlink = 0
	*out = a
	return 0
}

// setOrphan is Setattr for orphan o: the size goes to the file that
// carries the data, the rest to what o holds.
func (n *node) setOrphan(o *orphan, h *handle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if size, ok := in.GetSize(); ok {
		c := n.carrier(h, true)
		if c == nil {
			return syscall.EBADF
		}
		c.wrote.Store(true)
		if err := c.f.Truncate(int64(size)); err != nil {
			return n.w.errno("truncate", err)
		}
	}
	now := time.Now()
	n.mu.Lock()
	a := &o.attr
	if mode, ok := in.GetMode(); ok {
		a.Mode = a.Mode&syscall.S_IFMT | mode&0o7777
		o.set |= fuse.FATTR_MODE
	}
	if uid, ok := in.GetUID(); ok {
		a.Uid = uid
	}
	if gid, ok := in.GetGID(); ok {
		a.Gid = gid
	}
	if t, ok := in.GetATime(); ok {
		a.Atime, a.Atimensec = uint64(t.Unix()), uint32(t.Nanosecond())
		o.set |= fuse.FATTR_ATIME
	}
	if t, ok := in.GetMTime(); ok {
		a.Mtime, a.Mtimensec = uint64(t.Unix()), uint32(t.Nanosecond())
		o.set |= fuse.FATTR_MTIME
	}
	a.Ctime, a.Ctimensec = uint64(now.Unix()), uint32(now.Nanosecond())
	n.mu.Unlock()
	return n.orphanAttr(o, n.carrier(h, false), &out.Attr)
}

// releaseOrphan is Release's part for an orphan: the sink's file stays
// open while other descriptors are, and closes with the last. It
// reports whether h's file must stay open.
func (n *node) releaseOrphan(h *handle) (keep bool) {
	o := n.orph.Load()
	if o == nil {
		return false
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	last := n.opens.Load() == 0
	if o.sink == h && !last {
		o.kept = true
		return true
	}
	if last && o.kept && o.sink != nil && o.sink != h {
		_ = o.sink.f.Close() // its close(2) returned long ago; the data dies with the orphan
		o.sink, o.kept = nil, false
	}
	return false
}
