package fusefs

import (
	"context"
	"io/fs"
	"sync"

	"github.com/hanwen/go-fuse/v2/fuse"

	"github.com/forkspace/forkspace/vfs"
)

// Setuid and setgid bits (docs/decisions/032). The mount negotiates
// FUSE_HANDLE_KILLPRIV_V2: the kernel then neither asks for a file's
// attributes before each chown nor reads security.capability before
// every write (only the first after the attributes were refreshed), and
// leaves clearing setuid and setgid to the file system, telling it when:
//
//   - a WRITE by a caller without CAP_FSETID carries
//     FUSE_WRITE_KILL_SUIDGID;
//   - a SETATTR of a size by such a caller, and every chown of a file
//     that is not a directory, carry FATTR_KILL_SUIDGID;
//   - a CREATE with O_TRUNC (of a file that turned out to exist) by such
//     a caller carries FUSE_OPEN_KILL_SUIDGID.
//
// fusefs then clears setuid, and setgid when the group may execute the
// file, which is what the kernel did itself without the flag (fuse_setattr
// after a GETATTR). Where the kernel dropped a kill it would have made
// itself and has no flag to say so (chown(2) with both ids -1, and the
// clearing before a fallocate(2) by a caller without CAP_FSETID), it
// still sends a SETATTR that sets nothing: that clears them too
// (killSetattr). security.capability stays the kernel's: it still reads
// it once and removes it on write and chown (before such an empty
// SETATTR, which then clears setuid even for a caller with CAP_FSETID:
// a setuid file with file capabilities written by root loses setuid,
// where Linux keeps it).

// kills holds the requests in flight whose kernel asked for the kill:
// go-fuse's node API does not pass WRITE's or CREATE's flags, so the raw
// file system (rawFS) marks the request's cancel channel, unique among
// the requests in flight, and the node reads the mark (killAsked).
var kills sync.Map // <-chan struct{} -> struct{}

// rawFS is the node file system's raw side with the kill flags read.
type rawFS struct{ fuse.RawFileSystem }

// mark marks the request of cancel as asking for the kill until the
// returned function runs.
func mark(cancel <-chan struct{}) func() {
	kills.Store(cancel, struct{}{})
	return func() { kills.Delete(cancel) }
}

func (r rawFS) Write(cancel <-chan struct{}, in *fuse.WriteIn, data []byte) (uint32, fuse.Status) {
	if in.WriteFlags&fuse.WRITE_KILL_SUIDGID != 0 {
		defer mark(cancel)()
	}
	return r.RawFileSystem.Write(cancel, in, data)
}

func (r rawFS) Writev(cancel <-chan struct{}, in *fuse.WriteIn, data [][]byte) (uint32, fuse.Status) {
	if in.WriteFlags&fuse.WRITE_KILL_SUIDGID != 0 {
		defer mark(cancel)()
	}
	return r.RawFileSystem.Writev(cancel, in, data)
}

func (r rawFS) Create(cancel <-chan struct{}, in *fuse.CreateIn, name string, out *fuse.CreateOut) fuse.Status {
	if in.OpenFlags&fuse.OPEN_KILL_SUIDGID != 0 {
		defer mark(cancel)()
	}
	return r.RawFileSystem.Create(cancel, in, name, out)
}

// killAsked reports whether the kernel asked the request of ctx (a
// node method's) to clear setuid and setgid.
func killAsked(ctx context.Context) bool {
	c, ok := ctx.(*fuse.Context)
	if !ok || c.Cancel == nil {
		return false
	}
	_, ok = kills.Load(c.Cancel)
	return ok
}

// killed returns mode without setuid, and without setgid when the group
// may execute, and whether that changed it.
func killed(m fs.FileMode) (fs.FileMode, bool) {
	k := m &^ fs.ModeSetuid
	if m&0o010 != 0 {
		k &^= fs.ModeSetgid
	}
	return k, k != m
}

// kill clears setuid and setgid of file p as killed says, fi being its
// attributes now. The change is deferred like Setattr's, and settled by
// the handle's close. notify invalidates the attributes the kernel holds
// (a WRITE's reply carries none, and execve trusts the cached mode).
func (n *node) kill(ctx context.Context, p string, fi fs.FileInfo, notify bool) error {
	m, ok := killed(fi.Mode())
	if !ok || fi.IsDir() {
		return nil
	}
	n.unsettled.Store(true)
	if err := n.w.fs.Chmod(vfs.WithDeferredCommit(ctx), p, m&(fs.ModePerm|fs.ModeSetuid|fs.ModeSetgid|fs.ModeSticky)); err != nil {
		return err
	}
	if notify {
		// Attributes only (a negative offset): no page lock is taken,
		// so the request in flight cannot deadlock with it.
		_ = n.NotifyContent(-1, 0)
	}
	return nil
}

// killSetattr reports whether a SETATTR asks for the kill: it says so
// (FATTR_KILL_SUIDGID), or it sets nothing. The kernel sends a SETATTR
// that sets nothing when it has dropped the kill it would have done
// itself: chown(2) with both ids -1, and the clearing it decided before
// a write, truncate or fallocate by a caller without CAP_FSETID (the
// last has no flag of its own).
func killSetattr(in *fuse.SetAttrIn) bool {
	return in.Valid&fuse.FATTR_KILL_SUIDGID != 0 || in.Valid&^(fuse.FATTR_FH|fuse.FATTR_LOCKOWNER) == 0
}
