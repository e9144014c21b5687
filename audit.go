package forkspace

import (
	"context"
	"io"
	"io/fs"
	"os"
	"time"

	"github.com/forkspace/forkspace/audit"
	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/vfs"
)

// AuditLog returns the store's audit log: every call recorded through
// package audit (tools, MCP, exec, Audited handles), and the changes no
// such call covers (FUSE, mounts, plain library calls; see Feed). Record
// through it, not a log of its own, so the change feed hears of every
// entry at once.
func (s *Store) AuditLog() *audit.Log { return s.audit }

// AtRoot returns a read-only view of a tree root this workspace had (as
// returned by Root). Nothing keeps such a root alive: once no head or
// checkpoint references it, garbage collection may remove its nodes and
// reads fail with fs.ErrNotExist.
func (w *Workspace) AtRoot(root cas.Hash) *vfs.FS { return vfs.Snapshot(w.store.deps(), root, nil) }

// AutoCheckpoint checkpoints the workspace under label and returns the
// checkpoint's ID. Its signature is that of audit.Call.Checkpoint, so the
// tools layer and Audited take a rewind point before a mutating call with
// Call{Checkpoint: ws.AutoCheckpoint}.
func (w *Workspace) AutoCheckpoint(ctx context.Context, label string) (string, error) {
	c, err := w.Checkpoint(ctx, label)
	return c.ID, err
}

// AuditOptions configure an Audited handle.
type AuditOptions struct {
	// Actor is recorded with every call (an actor set on the call's context
	// with audit.WithActor takes precedence).
	Actor audit.Actor
	// AutoCheckpoint takes a checkpoint before every mutating call, so each
	// one can be rewound (Restore to the entry's Checkpoint).
	AutoCheckpoint bool
	// Surface names the door the calls come through, the prefix of the
	// recorded tool names ("webdav" records "webdav.Mkdir"); default
	// "library".
	Surface string
}

// Audited is a workspace handle that records each mutating call in the
// store's audit log (tool "library.<Method>", or AuditOptions.Surface
// instead of "library", arguments digested, file
// contents only by hash). Reads go to the embedded Workspace unrecorded.
// Bytes written through a handle from OpenFile or Create are covered by
// the one entry recording the open; calls made on the embedded Workspace
// directly are not recorded. Audited is safe for concurrent use.
type Audited struct {
	*Workspace
	log  *audit.Log
	opts AuditOptions
}

// Audited returns a handle on the workspace ref (a name or an ID) that
// records its mutations with opts.Actor. A missing workspace is
// fs.ErrNotExist.
func (s *Store) Audited(ctx context.Context, ref string, opts AuditOptions) (*Audited, error) {
	w, err := s.Workspace(ctx, ref)
	if err != nil {
		return nil, err
	}
	return &Audited{Workspace: w, log: s.AuditLog(), opts: opts}, nil
}

// run records one call of method that changes paths, after an automatic
// checkpoint when configured.
func (a *Audited) run(ctx context.Context, method string, args any, paths []string, fn func(context.Context) error) error {
	return a.record(ctx, method, args, paths, a.opts.AutoCheckpoint, fn)
}

// record records one call of method; auto asks for a checkpoint first.
func (a *Audited) record(ctx context.Context, method string, args any, paths []string, auto bool, fn func(context.Context) error) error {
	if audit.ActorFrom(ctx) == (audit.Actor{}) {
		ctx = audit.WithActor(ctx, a.opts.Actor)
	}
	surface := a.opts.Surface
	if surface == "" {
		surface = "library"
	}
	c := audit.Call{WorkspaceID: a.id, Tool: surface + "." + method, Args: args}
	if auto {
		c.Checkpoint = a.AutoCheckpoint
	}
	return audit.Run(ctx, a.log, c, func(ctx context.Context) ([]string, error) { return paths, fn(ctx) })
}

type pathArgs struct {
	Path   string      `json:"path"`
	Target string      `json:"target,omitempty"`
	Mode   fs.FileMode `json:"mode,omitempty"`
	Data   string      `json:"data_blake3,omitempty"`
	Size   int64       `json:"size,omitempty"`
	Flag   int         `json:"flag,omitempty"`
	Mtime  int64       `json:"mtime,omitempty"`
	Uid    int         `json:"uid,omitempty"`
	Gid    int         `json:"gid,omitempty"`
	Attr   string      `json:"attr,omitempty"`
}

// WriteFile records and performs Workspace.WriteFile.
func (a *Audited) WriteFile(ctx context.Context, name string, data []byte, perm fs.FileMode) error {
	args := pathArgs{Path: name, Mode: perm, Data: cas.Sum(data).String(), Size: int64(len(data))}
	return a.run(ctx, "WriteFile", args, []string{name}, func(ctx context.Context) error {
		return a.Workspace.WriteFile(ctx, name, data, perm)
	})
}

// WriteFileFrom records and performs Workspace.WriteFileFrom (the bytes
// are streamed, so the entry records the path and mode, not a hash).
func (a *Audited) WriteFileFrom(ctx context.Context, name string, r io.Reader, perm fs.FileMode) (n int64, err error) {
	err = a.run(ctx, "WriteFileFrom", pathArgs{Path: name, Mode: perm}, []string{name}, func(ctx context.Context) error {
		n, err = a.Workspace.WriteFileFrom(ctx, name, r, perm)
		return err
	})
	return n, err
}

// OpenFile records opening name with a flag that can change it (write,
// create, truncate, append) and performs Workspace.OpenFile; read-only
// opens are not recorded.
func (a *Audited) OpenFile(ctx context.Context, name string, flag int, perm fs.FileMode) (*vfs.File, error) {
	if flag&(os.O_WRONLY|os.O_RDWR|os.O_CREATE|os.O_TRUNC|os.O_APPEND) == 0 {
		return a.Workspace.OpenFile(ctx, name, flag, perm)
	}
	var f *vfs.File
	err := a.run(ctx, "OpenFile", pathArgs{Path: name, Flag: flag, Mode: perm}, []string{name}, func(ctx context.Context) error {
		var err error
		f, err = a.Workspace.OpenFile(ctx, name, flag, perm)
		return err
	})
	return f, err
}

// Create records and performs Workspace.Create (OpenFile with
// O_RDWR|O_CREATE|O_TRUNC, mode 0666).
func (a *Audited) Create(ctx context.Context, name string) (*vfs.File, error) {
	return a.OpenFile(ctx, name, os.O_RDWR|os.O_CREATE|os.O_TRUNC, 0o666)
}

// Mkdir records and performs Workspace.Mkdir.
func (a *Audited) Mkdir(ctx context.Context, name string, perm fs.FileMode) error {
	return a.run(ctx, "Mkdir", pathArgs{Path: name, Mode: perm}, []string{name}, func(ctx context.Context) error {
		return a.Workspace.Mkdir(ctx, name, perm)
	})
}

// MkdirAll records and performs Workspace.MkdirAll.
func (a *Audited) MkdirAll(ctx context.Context, name string, perm fs.FileMode) error {
	return a.run(ctx, "MkdirAll", pathArgs{Path: name, Mode: perm}, []string{name}, func(ctx context.Context) error {
		return a.Workspace.MkdirAll(ctx, name, perm)
	})
}

// Remove records and performs Workspace.Remove.
func (a *Audited) Remove(ctx context.Context, name string) error {
	return a.run(ctx, "Remove", pathArgs{Path: name}, []string{name}, func(ctx context.Context) error {
		return a.Workspace.Remove(ctx, name)
	})
}

// RemoveAll records and performs Workspace.RemoveAll.
func (a *Audited) RemoveAll(ctx context.Context, name string) error {
	return a.run(ctx, "RemoveAll", pathArgs{Path: name}, []string{name}, func(ctx context.Context) error {
		return a.Workspace.RemoveAll(ctx, name)
	})
}

// Rename records and performs Workspace.Rename.
func (a *Audited) Rename(ctx context.Context, oldname, newname string) error {
	return a.run(ctx, "Rename", pathArgs{Path: oldname, Target: newname}, []string{oldname, newname}, func(ctx context.Context) error {
		return a.Workspace.Rename(ctx, oldname, newname)
	})
}

// Symlink records and performs Workspace.Symlink.
func (a *Audited) Symlink(ctx context.Context, target, newname string) error {
	return a.run(ctx, "Symlink", pathArgs{Path: newname, Target: target}, []string{newname}, func(ctx context.Context) error {
		return a.Workspace.Symlink(ctx, target, newname)
	})
}

// Link records and performs Workspace.Link.
func (a *Audited) Link(ctx context.Context, oldname, newname string) error {
	return a.run(ctx, "Link", pathArgs{Path: newname, Target: oldname}, []string{newname}, func(ctx context.Context) error {
		return a.Workspace.Link(ctx, oldname, newname)
	})
}

// Chmod records and performs Workspace.Chmod.
func (a *Audited) Chmod(ctx context.Context, name string, mode fs.FileMode) error {
	return a.run(ctx, "Chmod", pathArgs{Path: name, Mode: mode}, []string{name}, func(ctx context.Context) error {
		return a.Workspace.Chmod(ctx, name, mode)
	})
}

// Chown records and performs Workspace.Chown.
func (a *Audited) Chown(ctx context.Context, name string, uid, gid int) error {
	return a.run(ctx, "Chown", pathArgs{Path: name, Uid: uid, Gid: gid}, []string{name}, func(ctx context.Context) error {
		return a.Workspace.Chown(ctx, name, uid, gid)
	})
}

// Chtimes records and performs Workspace.Chtimes.
func (a *Audited) Chtimes(ctx context.Context, name string, atime, mtime time.Time) error {
	return a.run(ctx, "Chtimes", pathArgs{Path: name, Mtime: mtime.UnixNano()}, []string{name}, func(ctx context.Context) error {
		return a.Workspace.Chtimes(ctx, name, atime, mtime)
	})
}

// Truncate records and performs Workspace.Truncate.
func (a *Audited) Truncate(ctx context.Context, name string, size int64) error {
	return a.run(ctx, "Truncate", pathArgs{Path: name, Size: size}, []string{name}, func(ctx context.Context) error {
		return a.Workspace.Truncate(ctx, name, size)
	})
}

// Setxattr records and performs Workspace.Setxattr.
func (a *Audited) Setxattr(ctx context.Context, name, attr string, value []byte) error {
	args := pathArgs{Path: name, Attr: attr, Data: cas.Sum(value).String()}
	return a.run(ctx, "Setxattr", args, []string{name}, func(ctx context.Context) error {
		return a.Workspace.Setxattr(ctx, name, attr, value)
	})
}

// Removexattr records and performs Workspace.Removexattr.
func (a *Audited) Removexattr(ctx context.Context, name, attr string) error {
	return a.run(ctx, "Removexattr", pathArgs{Path: name, Attr: attr}, []string{name}, func(ctx context.Context) error {
		return a.Workspace.Removexattr(ctx, name, attr)
	})
}

// Restore records and performs Workspace.Restore (changed paths: ".").
func (a *Audited) Restore(ctx context.Context, ref string) error {
	return a.run(ctx, "Restore", pathArgs{Path: ".", Target: ref}, []string{"."}, func(ctx context.Context) error {
		return a.Workspace.Restore(ctx, ref)
	})
}

// Checkpoint records and performs Workspace.Checkpoint (no automatic
// checkpoint before it).
func (a *Audited) Checkpoint(ctx context.Context, label string) (Checkpoint, error) {
	var c Checkpoint
	err := a.record(ctx, "Checkpoint", pathArgs{Path: ".", Target: label}, nil, false, func(ctx context.Context) error {
		var err error
		c, err = a.Workspace.Checkpoint(ctx, label)
		return err
	})
	return c, err
}

// DeleteCheckpoint records and performs Workspace.DeleteCheckpoint.
func (a *Audited) DeleteCheckpoint(ctx context.Context, ref string) error {
	return a.record(ctx, "DeleteCheckpoint", pathArgs{Path: ".", Target: ref}, nil, false, func(ctx context.Context) error {
		return a.Workspace.DeleteCheckpoint(ctx, ref)
	})
}

// Fork records and performs Workspace.Fork (recorded on the source
// workspace; the fork is not audited unless opened through Audited).
func (a *Audited) Fork(ctx context.Context, name string, opts ForkOptions) (*Workspace, error) {
	var w *Workspace
	err := a.record(ctx, "Fork", struct {
		Name string      `json:"name"`
		Opts ForkOptions `json:"opts"`
	}{name, opts}, nil, false, func(ctx context.Context) error {
		var err error
		w, err = a.Workspace.Fork(ctx, name, opts)
		return err
	})
	return w, err
}
