package httpapi

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/audit"
	"github.com/forkspace/forkspace/auth"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/execpolicy"
	"github.com/forkspace/forkspace/gc"
	"github.com/forkspace/forkspace/mount"
	"github.com/forkspace/forkspace/provider"
	"github.com/forkspace/forkspace/sandbox"
	"github.com/forkspace/forkspace/tools"
	"github.com/forkspace/forkspace/transfer"
	"github.com/forkspace/forkspace/vfs"
)

// Shell runs commands against one workspace with their output streamed;
// *sandbox.Shell implements it.
type Shell interface {
	ExecStream(ctx context.Context, req provider.ExecRequest, stdout, stderr io.Writer) (provider.ExecResult, error)
	Close() error
}

var _ Shell = (*sandbox.Shell)(nil)

// LocalOptions configure Local.
type LocalOptions struct {
	// Audit records every mutation Local makes (tool "<Surface>.<call>"),
	// with the actor of the call's context or else Actor. nil records
	// nothing.
	Audit audit.Recorder
	Actor audit.Actor
	// Surface names the door the calls come through in recorded tool
	// names: "rest" (the default) for the server, "cli" for the CLI on a
	// store it opened itself.
	Surface string
	// Shell builds exec's shell for a workspace (nil: Exec fails with
	// errors.ErrUnsupported). It records its runs itself if it should.
	Shell func(ctx context.Context, w *forkspace.Workspace) (Shell, error)
	// Tools configures glob and grep (limits, ignored directories).
	Tools tools.Options
	// MountDrivers parse CreateRequest.Mounts.
	MountDrivers mount.Drivers
	// Skip hears of tar entries an import or export skipped (devices,
	// FIFOs, sockets); nil skips them silently.
	Skip func(err error)
	// Progress hears of an import's or export's progress.
	Progress func(transfer.Progress)
	// GCProgress hears of a collection's phases.
	GCProgress func(phase string, done, total int64)
	// FiniteEvents ends event streams (io.EOF from Next) once they reach
	// the newest event of when they began: for a process that holds the
	// store alone and makes no changes meanwhile (the CLI without a
	// server), where nothing newer can come.
	FiniteEvents bool
}

// Local is the API over an open store, in this process.
type Local struct {
	st    *forkspace.Store
	opts  LocalOptions
	tools *tools.Set
}

var _ API = (*Local)(nil)

// NewLocal returns the API of st.
func NewLocal(st *forkspace.Store, opts LocalOptions) *Local {
	opts.Tools.ReadOnly = true // glob and grep only
	opts.Tools.Recorder = nil
	return &Local{st: st, opts: opts, tools: tools.New(opts.Tools)}
}

// Store returns the store Local serves.
func (l *Local) Store() *forkspace.Store { return l.st }

// record runs fn as one audited mutation of workspace id.
func (l *Local) record(ctx context.Context, id, call string, args any, fn func(context.Context) ([]string, error)) error {
	if l.opts.Audit == nil {
		_, err := fn(ctx)
		return err
	}
	if audit.ActorFrom(ctx) == (audit.Actor{}) {
		ctx = audit.WithActor(ctx, l.opts.Actor)
	}
	surface := l.opts.Surface
	if surface == "" {
		surface = "rest"
	}
	return audit.Run(ctx, l.opts.Audit, audit.Call{WorkspaceID: id, Tool: surface + "." + call, Args: args}, fn)
}

// workspace returns the workspace ref names (a name or an ID; a
// checkpoint is fs.ErrInvalid).
func (l *Local) workspace(ctx context.Context, ref string) (*forkspace.Workspace, error) {
	ws, cp, err := forkspace.ParseState(ref)
	if err != nil {
		return nil, err
	}
	if cp != "" {
		return nil, fmt.Errorf("workspace %s: %w: names a checkpoint, not a workspace", ref, fs.ErrInvalid)
	}
	return l.st.Workspace(ctx, ws)
}

// live returns the live workspace of state, refusing a checkpoint.
func (l *Local) live(ctx context.Context, op, state string) (*forkspace.Workspace, error) {
	ws, cp, err := forkspace.ParseState(state)
	if err != nil {
		return nil, err
	}
	if cp != "" {
		return nil, fmt.Errorf("%s %s: %w: a checkpoint cannot change; use %s", op, state, errdefs.ErrReadOnly, ws)
	}
	return l.st.Workspace(ctx, ws)
}

// view returns the filesystem of state and, for a live head, its
// workspace.
func (l *Local) view(ctx context.Context, state string) (*vfs.FS, *forkspace.Workspace, error) {
	ws, cp, err := forkspace.ParseState(state)
	if err != nil {
		return nil, nil, err
	}
	if cp != "" {
		f, err := l.st.Snapshot(ctx, state)
		return f, nil, err
	}
	w, err := l.st.Workspace(ctx, ws)
	if err != nil {
		return nil, nil, err
	}
	return w.FS, w, nil
}

// mutate runs fn on the filesystem of state as an audited call (a
// checkpoint's view fails in fn with errdefs.ErrReadOnly); fn uses the
// call's context, which marks its changes as recorded (audit.Cover).
func (l *Local) mutate(ctx context.Context, state, call string, args any, changed []string, fn func(ctx context.Context, f *vfs.FS) error) error {
	f, w, err := l.view(ctx, state)
	if err != nil {
		return err
	}
	if w == nil {
		return fn(ctx, f)
	}
	return l.record(ctx, w.ID(), call, args, func(ctx context.Context) ([]string, error) { return changed, fn(ctx, f) })
}

// permitAll checks perm on the workspace of each non-empty state for the
// caller of ctx (see permit).
func (l *Local) permitAll(ctx context.Context, perm auth.Perm, states ...string) error {
	for _, s := range states {
		if s == "" {
			continue
		}
		if err := permit(ctx, l, perm, s); err != nil {
			return err
		}
	}
	return nil
}

// visible lists the workspaces of the caller's tenant its token reaches.
func (l *Local) visible(ctx context.Context) ([]forkspace.Info, error) {
	infos, err := l.st.List(ctx)
	if s, ok := auth.FromContext(ctx); ok && err == nil {
		tenant := forkspace.TenantFrom(ctx)
		infos = slices.DeleteFunc(infos, func(i forkspace.Info) bool { return !s.Sees(tenant, i.Name) })
	}
	return infos, err
}

// cursor encodes the last name of a page; after decodes it.
func cursor(name string) string { return base64.RawURLEncoding.EncodeToString([]byte(name)) }

func after(c string) (string, error) {
	b, err := base64.RawURLEncoding.DecodeString(c)
	if err != nil {
		return "", fmt.Errorf("cursor %s: %w", quoteShort(c), ErrBadRequest)
	}
	return string(b), nil
}

// bounds returns the last key before a page (the decoded cursor, "" for
// the first page) and its size.
func (r PageRequest) bounds() (last string, limit int, err error) {
	limit = r.Limit
	switch {
	case limit < 0:
		return "", 0, fmt.Errorf("limit %d: %w", limit, ErrBadRequest)
	case limit == 0:
		limit = DefaultLimit
	}
	limit = min(limit, MaxLimit)
	if r.Cursor != "" {
		if last, err = after(r.Cursor); err != nil {
			return "", 0, err
		}
	}
	return last, limit, nil
}

// page cuts the items sorted by key after the request's cursor.
func page[T any](items []T, key func(T) string, r PageRequest) ([]T, string, error) {
	last, limit, err := r.bounds()
	if err != nil {
		return nil, "", err
	}
	items = items[sort.Search(len(items), func(i int) bool { return key(items[i]) > last }):]
	if len(items) <= limit {
		return items, "", nil
	}
	items = items[:limit]
	return items, cursor(key(items[limit-1])), nil
}

func (l *Local) ListWorkspaces(ctx context.Context, r PageRequest) (WorkspacePage, error) {
	infos, err := l.visible(ctx)
	if err != nil {
		return WorkspacePage{}, err
	}
	got, next, err := page(infos, func(i forkspace.Info) string { return i.Name }, r)
	if got == nil {
		got = []forkspace.Info{}
	}
	return WorkspacePage{Workspaces: got, Next: next}, err
}

func (l *Local) CreateWorkspace(ctx context.Context, r CreateRequest) (info forkspace.Info, err error) {
	if err := forkspace.ValidName(r.Name); err != nil {
		return info, err
	}
	if err := l.permitAll(ctx, auth.Write, r.Name); err != nil {
		return info, err
	}
	specs := make([]mount.Spec, 0, len(r.Mounts))
	for _, m := range r.Mounts {
		s, err := mount.ParseSpec(m, l.opts.MountDrivers)
		if err != nil {
			return info, err
		}
		specs = append(specs, s)
	}
	err = l.record(ctx, "", "create", r, func(ctx context.Context) ([]string, error) {
		w, err := l.st.Create(ctx, r.Name, forkspace.CreateOptions{Quota: r.Quota, Mounts: specs})
		if err == nil {
			info, err = w.Info(ctx)
		}
		return nil, err
	})
	return info, err
}

func (l *Local) WorkspaceInfo(ctx context.Context, ws string) (forkspace.Info, error) {
	w, err := l.workspace(ctx, ws)
	if err != nil {
		return forkspace.Info{}, err
	}
	return w.Info(ctx)
}

func (l *Local) DeleteWorkspace(ctx context.Context, ws string) error {
	w, err := l.workspace(ctx, ws)
	if err != nil {
		return err
	}
	id := w.ID()
	// The store's Options.OnDelete removes exec's host copy, if any.
	return l.record(ctx, id, "delete", map[string]string{"workspace": ws}, func(ctx context.Context) ([]string, error) {
		return []string{"."}, l.st.Delete(ctx, id)
	})
}

func (l *Local) ForkWorkspace(ctx context.Context, src string, r ForkRequest) (info forkspace.Info, err error) {
	ws, cp, err := forkspace.ParseState(src)
	if err != nil {
		return info, err
	}
	if err := forkspace.ValidName(r.Name); err != nil {
		return info, err
	}
	if err := l.permitAll(ctx, auth.Write, r.Name); err != nil {
		return info, err
	}
	w, err := l.st.Workspace(ctx, ws)
	if err != nil {
		return info, err
	}
	err = l.record(ctx, w.ID(), "fork", map[string]any{"from": src, "request": r}, func(ctx context.Context) ([]string, error) {
		f, err := w.Fork(ctx, r.Name, forkspace.ForkOptions{Checkpoint: cp, Quota: r.Quota})
		if err == nil {
			info, err = f.Info(ctx)
		}
		return nil, err
	})
	return info, err
}

func (l *Local) Parent(ctx context.Context, ws string) (string, error) {
	w, err := l.workspace(ctx, ws)
	if err != nil {
		return "", err
	}
	return l.st.Parent(ctx, w.ID())
}

func (l *Local) Checkpoints(ctx context.Context, ws string) ([]forkspace.Checkpoint, error) {
	name, _, err := forkspace.ParseState(ws)
	if err != nil {
		return nil, err
	}
	w, err := l.st.Workspace(ctx, name)
	if err != nil {
		return nil, err
	}
	cps, err := w.Checkpoints(ctx)
	if cps == nil && err == nil {
		cps = []forkspace.Checkpoint{}
	}
	return cps, err
}

func (l *Local) Checkpoint(ctx context.Context, ws, label string) (cp forkspace.Checkpoint, err error) {
	w, err := l.live(ctx, "checkpoint", ws)
	if err != nil {
		return cp, err
	}
	err = l.record(ctx, w.ID(), "checkpoint", map[string]string{"label": label}, func(ctx context.Context) ([]string, error) {
		cp, err = w.Checkpoint(ctx, label)
		return nil, err
	})
	return cp, err
}

func (l *Local) Restore(ctx context.Context, ws, cp string) error {
	w, err := l.live(ctx, "restore", ws)
	if err != nil {
		return err
	}
	return l.record(ctx, w.ID(), "restore", map[string]string{"checkpoint": cp}, func(ctx context.Context) ([]string, error) {
		return []string{"."}, w.Restore(ctx, cp)
	})
}

func (l *Local) Diff(ctx context.Context, from, to string, unified bool) ([]vfs.Change, error) {
	if err := l.permitAll(ctx, auth.Read, from, to); err != nil {
		return nil, err
	}
	changes, err := l.st.Diff(ctx, from, to, vfs.DiffOptions{Unified: unified})
	if changes == nil && err == nil {
		changes = []vfs.Change{}
	}
	return changes, err
}

// clean cleans a workspace path.
func clean(p string) (string, error) { return vfs.CleanPath(p) }

func (l *Local) Stat(ctx context.Context, state, p string) (Entry, error) {
	p, err := clean(p)
	if err != nil {
		return Entry{}, err
	}
	f, _, err := l.view(ctx, state)
	if err != nil {
		return Entry{}, err
	}
	e, err := describe(ctx, f, p)
	return e, hinted(ctx, f, err)
}

// describe returns the entry at p without following a final link.
func describe(ctx context.Context, f *vfs.FS, p string) (Entry, error) {
	fi, err := f.Lstat(ctx, p)
	if err != nil {
		return Entry{}, err
	}
	var target string
	if fi.Mode()&fs.ModeSymlink != 0 {
		if target, err = f.Readlink(ctx, p); err != nil {
			return Entry{}, err
		}
	}
	return NewEntry(p, fi, target), nil
}

func (l *Local) ReadDir(ctx context.Context, state, p string, r PageRequest) (DirPage, error) {
	p, err := clean(p)
	if err != nil {
		return DirPage{}, err
	}
	f, _, err := l.view(ctx, state)
	if err != nil {
		return DirPage{}, err
	}
	last, limit, err := r.bounds()
	if err != nil {
		return DirPage{}, err
	}
	des, more, err := f.ReadDirPage(ctx, p, last, limit)
	if err != nil {
		return DirPage{}, hinted(ctx, f, err)
	}
	out := DirPage{Entries: make([]Entry, 0, len(des))}
	if more {
		out.Next = cursor(des[len(des)-1].Name())
	}
	for _, de := range des {
		e, err := describeListed(ctx, f, path.Join(p, de.Name()), de)
		if err != nil {
			return DirPage{}, err
		}
		out.Entries = append(out.Entries, e)
	}
	return out, nil
}

// describeListed describes the entry de listed at p: from the inode the
// listing names (no walk from the root), or, for a symbolic link or a
// mount's root, as describe does.
func describeListed(ctx context.Context, f *vfs.FS, p string, de fs.DirEntry) (Entry, error) {
	if de.Type()&fs.ModeSymlink != 0 || f.IsVirtual(p) {
		return describe(ctx, f, p)
	}
	fi, err := de.Info()
	if err != nil {
		return Entry{}, err
	}
	return NewEntry(p, fi, ""), nil
}

func (l *Local) Open(ctx context.Context, state, p string, r ReadRequest) (*Download, error) {
	p, err := clean(p)
	if err != nil {
		return nil, err
	}
	f, _, err := l.view(ctx, state)
	if err != nil {
		return nil, err
	}
	h, err := f.Open(ctx, p)
	if err != nil {
		return nil, hinted(ctx, f, err)
	}
	d, err := download(h, p, r)
	if err != nil {
		h.Close()
		return nil, err
	}
	return d, nil
}

// download positions open file h for r.
func download(h *vfs.File, p string, r ReadRequest) (*Download, error) {
	fi, err := h.Stat()
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return nil, &fs.PathError{Op: "read", Path: p, Err: errdefs.ErrIsDir}
	}
	e := NewEntry(p, fi, "")
	if matchETag(r.IfNoneMatch, e.ETag) {
		return nil, &fs.PathError{Op: "read", Path: p, Err: ErrNotModified}
	}
	size := fi.Size()
	if r.IfRange != "" && r.IfRange != e.ETag {
		r = ReadRequest{Length: -1}
	}
	if r.Suffix > 0 {
		r.Offset, r.Length = max(size-r.Suffix, 0), -1
	}
	length := r.Length
	if length < 0 || (!r.Ranged && length == 0) {
		length = size - r.Offset
	}
	if r.Offset < 0 || r.Offset > size || (r.Ranged && r.Offset >= size) {
		return nil, &fs.PathError{Op: "read", Path: p, Err: fmt.Errorf("%w: bytes from %d of a %d-byte file", ErrRange, r.Offset, size)}
	}
	length = min(length, size-r.Offset)
	if _, err := h.Seek(r.Offset, io.SeekStart); err != nil {
		return nil, err
	}
	return &Download{Entry: e, Offset: r.Offset, Length: length, Ranged: r.Ranged, ReadCloser: struct {
		io.Reader
		io.Closer
	}{io.LimitReader(&unchanged{h: h, p: p, etag: e.ETag}, length), h}}, nil
}

// unchanged reads an open file and fails with errdefs.ErrConflict as soon
// as the file is found to have changed since it was opened: a handle sees
// writes made after its open (POSIX), and a download must never mix two
// versions. The check follows each read, so no byte read after a change
// is returned.
type unchanged struct {
	h    *vfs.File
	p    string
	etag string
}

func (u *unchanged) Read(b []byte) (int, error) {
	n, err := u.h.Read(b)
	fi, serr := u.h.Stat()
	if serr != nil {
		return 0, serr
	}
	if etag(fi) != u.etag {
		return 0, &fs.PathError{Op: "read", Path: u.p, Err: fmt.Errorf("%w: the file changed while it was read", errdefs.ErrConflict)}
	}
	return n, err
}

// matchETag reports whether etag is in tags ("*" matches any file).
func matchETag(tags []string, etag string) bool {
	for _, t := range tags {
		if t == "*" || (etag != "" && strings.TrimPrefix(t, "W/") == etag) {
			return true
		}
	}
	return false
}

// writeCond is the condition of a write request (nil: none).
func writeCond(p string, r WriteRequest) func(fs.FileInfo) error {
	if len(r.IfMatch) == 0 && !r.CreateOnly {
		return nil
	}
	return func(fi fs.FileInfo) error {
		switch {
		case r.CreateOnly && fi != nil:
			return fmt.Errorf("%w: %s exists (If-None-Match: *)", ErrPrecondition, p)
		case len(r.IfMatch) > 0 && fi == nil:
			return fmt.Errorf("%w: %s does not exist (If-Match)", ErrPrecondition, p)
		case len(r.IfMatch) > 0 && (!fi.Mode().IsRegular() || !matchETag(r.IfMatch, etag(fi))):
			return fmt.Errorf("%w: %s changed: its ETag is not %s (If-Match)", ErrPrecondition, p, strings.Join(r.IfMatch, ", "))
		}
		return nil
	}
}

func (l *Local) Write(ctx context.Context, state, p string, body io.Reader, r WriteRequest) (Entry, error) {
	p, err := clean(p)
	if err != nil {
		return Entry{}, err
	}
	perm := r.Perm
	if perm == 0 {
		perm = 0o644
	}
	cond := writeCond(p, r)
	var written *vfs.FS
	args := map[string]any{"path": p, "perm": fmt.Sprintf("%04o", vfs.UnixMode(perm)), "if_match": r.IfMatch, "create_only": r.CreateOnly}
	err = l.mutate(ctx, state, "write", args, []string{p}, func(ctx context.Context, f *vfs.FS) error {
		written = f
		if cond != nil {
			// Fail fast, before the body is read; the commit checks again.
			fi, err := f.Stat(ctx, p)
			if errors.Is(err, fs.ErrNotExist) {
				fi, err = nil, nil
			}
			if err == nil {
				err = cond(fi)
			}
			if err != nil {
				return &fs.PathError{Op: "write", Path: p, Err: err}
			}
		}
		// The write is the call's last act: its entry commits with it.
		if _, err := f.WriteFileFromIf(committing(ctx, p), p, body, perm, cond); err != nil {
			return hinted(ctx, f, err)
		}
		return nil
	})
	if err != nil {
		return Entry{}, err
	}
	fi, err := written.Stat(ctx, p)
	if err != nil {
		return Entry{}, err
	}
	return NewEntry(p, fi, ""), nil
}

// committing returns ctx made to carry the entry of the audited call it
// runs under into the commit of the call's last mutation, which changes
// paths (audit.Commit, vfs.WithCommit); ctx itself outside an audited call.
func committing(ctx context.Context, paths ...string) context.Context {
	if fn, done := audit.Commit(ctx, paths); fn != nil {
		return vfs.WithCommit(ctx, fn, done)
	}
	return ctx
}

func (l *Local) Remove(ctx context.Context, state, p string, recursive bool) error {
	p, err := clean(p)
	if err != nil {
		return err
	}
	return l.mutate(ctx, state, "remove", map[string]any{"path": p, "recursive": recursive}, []string{p}, func(ctx context.Context, f *vfs.FS) error {
		if !recursive {
			return hinted(ctx, f, f.Remove(committing(ctx, p), p))
		}
		if _, err := f.Lstat(ctx, p); err != nil {
			return hinted(ctx, f, err)
		}
		return f.RemoveAll(ctx, p)
	})
}

func (l *Local) Rename(ctx context.Context, state, from, to string) error {
	from, err := clean(from)
	if err != nil {
		return err
	}
	if to, err = clean(to); err != nil {
		return err
	}
	return l.mutate(ctx, state, "rename", map[string]string{"from": from, "to": to}, []string{from, to}, func(ctx context.Context, f *vfs.FS) error {
		return hinted(ctx, f, f.Rename(ctx, from, to))
	})
}

func (l *Local) Mkdir(ctx context.Context, state, p string, parents bool) error {
	p, err := clean(p)
	if err != nil {
		return err
	}
	return l.mutate(ctx, state, "mkdir", map[string]any{"path": p, "parents": parents}, []string{p}, func(ctx context.Context, f *vfs.FS) error {
		if parents {
			return f.MkdirAll(ctx, p, 0o755)
		}
		return f.Mkdir(committing(ctx, p), p, 0o755)
	})
}

// fsWorkspace is a provider.Workspace with the file module alone, for the
// search tools.
type fsWorkspace struct{ f *vfs.FS }

func (w fsWorkspace) ID() string                      { return "" }
func (w fsWorkspace) FS() provider.FS                 { return w.f }
func (w fsWorkspace) Shell() provider.Shell           { return nil }
func (w fsWorkspace) Snapshots() provider.Snapshots   { return nil }
func (w fsWorkspace) Close(ctx context.Context) error { return nil }

// tool runs a read-only tool on state.
func (l *Local) tool(ctx context.Context, state, name, dir string, args any) (ToolText, error) {
	f, _, err := l.view(ctx, state)
	if err != nil {
		return ToolText{}, err
	}
	if dir != "" {
		// A missing or escaping path is the library's error, not a tool text.
		p, err := clean(dir)
		if err != nil {
			return ToolText{}, err
		}
		if _, err := f.Stat(ctx, p); err != nil {
			return ToolText{}, err
		}
	}
	raw, err := json.Marshal(args)
	if err != nil {
		return ToolText{}, err
	}
	res := l.tools.Call(ctx, tools.Direct(fsWorkspace{f}), name, raw)
	if res.IsError {
		return ToolText{}, fmt.Errorf("%s: %w: %s", name, fs.ErrInvalid, res.Text)
	}
	return ToolText{Text: res.Text}, nil
}

func (l *Local) Glob(ctx context.Context, state string, r GlobRequest) (ToolText, error) {
	return l.tool(ctx, state, "glob", r.Path, r)
}

func (l *Local) Grep(ctx context.Context, state string, r GrepRequest) (ToolText, error) {
	return l.tool(ctx, state, "grep", r.Path, r)
}

func (l *Local) Exec(ctx context.Context, ws string, r provider.ExecRequest, stdout, stderr io.Writer) (provider.ExecResult, error) {
	w, err := l.live(ctx, "exec", ws)
	if err != nil {
		return provider.ExecResult{}, err
	}
	if l.opts.Shell == nil {
		return provider.ExecResult{}, fmt.Errorf("exec: %w: this server runs no commands", errors.ErrUnsupported)
	}
	sh, err := l.opts.Shell(ctx, w)
	if err != nil {
		return provider.ExecResult{}, err
	}
	defer sh.Close()
	return sh.ExecStream(ctx, r, stdout, stderr)
}

func (l *Local) ExecPolicy(ctx context.Context, ws string) (execpolicy.Policy, error) {
	w, err := l.workspace(ctx, ws)
	if err != nil {
		return execpolicy.Policy{}, err
	}
	return w.ExecPolicy(ctx)
}

func (l *Local) SetExecPolicy(ctx context.Context, ws string, p execpolicy.Policy) (execpolicy.Policy, error) {
	w, err := l.live(ctx, "set exec policy of", ws)
	if err == nil {
		err = w.SetExecPolicy(ctx, p)
	}
	if err != nil {
		return execpolicy.Policy{}, err
	}
	return w.ExecPolicy(ctx)
}

func (l *Local) Mounts(ctx context.Context, ws string) ([]forkspace.MountInfo, error) {
	w, err := l.mountWorkspace(ctx, ws)
	if err != nil {
		return nil, err
	}
	ms := w.Mounts()
	if ms == nil {
		ms = []forkspace.MountInfo{}
	}
	return ms, nil
}

// mountWorkspace returns the live workspace of ws (mounts act on heads).
func (l *Local) mountWorkspace(ctx context.Context, ws string) (*forkspace.Workspace, error) {
	name, cp, err := forkspace.ParseState(ws)
	if err != nil {
		return nil, err
	}
	if cp != "" {
		return nil, fmt.Errorf("mounts of %s: %w: mounts act on the live workspace, not a checkpoint", ws, fs.ErrInvalid)
	}
	return l.st.Workspace(ctx, name)
}

func (l *Local) MountAction(ctx context.Context, ws string, action MountAction, root string) error {
	w, err := l.mountWorkspace(ctx, ws)
	if err != nil {
		return err
	}
	fn := map[MountAction]func(context.Context, string) error{MountFlush: w.Flush, MountRefresh: w.Refresh, MountPrefetch: w.Prefetch}[action]
	if fn == nil {
		return fmt.Errorf("mount action %s: %w: want flush, refresh or prefetch", quoteShort(string(action)), fs.ErrInvalid)
	}
	changed := []string{"."}
	if root != "" {
		// A mount root is named "/ROOT"; the log has workspace paths.
		p, err := clean(root)
		if err != nil {
			return err
		}
		changed = []string{p}
	}
	return l.record(ctx, w.ID(), "mount."+string(action), map[string]string{"root": root}, func(ctx context.Context) ([]string, error) {
		return changed, fn(ctx, root)
	})
}

func (l *Local) ResolveMount(ctx context.Context, ws, p string, keepLocal bool) error {
	w, err := l.mountWorkspace(ctx, ws)
	if err != nil {
		return err
	}
	cp, err := clean(p)
	if err != nil {
		return err
	}
	r := mount.TakeUpstream
	if keepLocal {
		r = mount.KeepLocal
	}
	for _, m := range w.Mounts() {
		if rel, ok := strings.CutPrefix(cp, m.Root[1:]+"/"); ok {
			return l.record(ctx, w.ID(), "mount.resolve", map[string]any{"path": cp, "keep_local": keepLocal}, func(ctx context.Context) ([]string, error) {
				return []string{cp}, w.ResolveMount(ctx, m.Root, rel, r)
			})
		}
	}
	return &fs.PathError{Op: "resolve", Path: p, Err: fmt.Errorf("%w: not under a mount", fs.ErrNotExist)}
}

// transferOptions counts a transfer into s; totals are counted first
// only for LocalOptions.Progress.
func (l *Local) transferOptions(s *TransferSummary) transfer.Options {
	return transfer.Options{
		Totals: l.opts.Progress != nil,
		Progress: func(p transfer.Progress) {
			s.Entries, s.Bytes = p.Files, p.Bytes
			if l.opts.Progress != nil {
				l.opts.Progress(p)
			}
		},
		Skip: func(_ string, err error) error {
			if l.opts.Skip != nil {
				l.opts.Skip(err)
			}
			return nil
		},
	}
}

func (l *Local) ImportTar(ctx context.Context, ws, to string, r io.Reader) (TransferSummary, error) {
	s := TransferSummary{}
	dst, err := clean(to)
	if err != nil {
		return s, err
	}
	s.Path = dst
	err = l.mutate(ctx, ws, "import", map[string]string{"to": dst}, []string{dst}, func(ctx context.Context, f *vfs.FS) error {
		return transfer.ImportTar(ctx, f, dst, r, l.transferOptions(&s))
	})
	return s, err
}

func (l *Local) ExportTar(ctx context.Context, state, from string, w io.Writer) (TransferSummary, error) {
	s := TransferSummary{}
	src, err := clean(from)
	if err != nil {
		return s, err
	}
	s.Path = src
	f, _, err := l.view(ctx, state)
	if err != nil {
		return s, err
	}
	return s, transfer.ExportTar(ctx, f, src, w, l.transferOptions(&s))
}

func (l *Local) Audit(ctx context.Context, ws string, f audit.Filter) ([]audit.Entry, error) {
	if err := l.permitAll(ctx, auth.Read, ws); err != nil {
		return nil, err
	}
	if ws != "" {
		name, _, err := forkspace.ParseState(ws)
		if err != nil {
			return nil, err
		}
		w, err := l.st.Workspace(ctx, name)
		if err != nil {
			return nil, err
		}
		f.WorkspaceID = w.ID()
	}
	entries, err := l.st.AuditLog().Entries(ctx, f)
	if err != nil {
		return nil, err
	}
	if s, ok := auth.FromContext(ctx); ok && ws == "" && !(s.Tenant == auth.AnyTenant && s.Perms&auth.Admin != 0) {
		// Only the entries of workspaces the token reaches.
		infos, err := l.visible(ctx)
		if err != nil {
			return nil, err
		}
		ids := map[string]bool{}
		for _, i := range infos {
			ids[i.ID] = true
		}
		entries = slices.DeleteFunc(entries, func(e audit.Entry) bool { return !ids[e.WorkspaceID] })
	}
	return append([]audit.Entry{}, entries...), nil
}

func (l *Local) GC(ctx context.Context, r GCRequest) (GCResult, error) {
	if r.Grace < 0 {
		return GCResult{}, fmt.Errorf("gc: %w: negative grace period", fs.ErrInvalid)
	}
	g := r.Grace
	if g == 0 {
		g = gc.NoGrace
	}
	var rep forkspace.GCReport
	run := func(ctx context.Context) ([]string, error) {
		var err error
		rep, err = l.st.GC(ctx, forkspace.GCOptions{Grace: g, DryRun: r.DryRun, Progress: l.opts.GCProgress})
		if err == nil && !r.DryRun {
			// exec's host copies of workspaces nobody ran a command in
			// for sandbox.DefaultIdle.
			_, err = sandbox.Sweep(ctx, sandbox.SweepOptions{})
		}
		return nil, err
	}
	var err error
	if r.DryRun {
		_, err = run(ctx)
	} else {
		err = l.record(ctx, "", "gc", r, run)
	}
	if err != nil {
		return GCResult{}, err
	}
	return GCResult{
		DryRun: rep.DryRun, GraceSeconds: rep.Grace.Seconds(),
		Reachable: rep.Plan.Reachable, Garbage: rep.Plan.Garbage, Young: rep.Plan.Young, Held: rep.Plan.Held, Reclaimed: rep.Reclaimed,
	}, nil
}

func (l *Local) Fsck(ctx context.Context) (*gc.CheckReport, error) { return l.st.Check(ctx) }

func (l *Local) DF(ctx context.Context) (DF, error) {
	u, err := l.st.Usage(ctx)
	if err != nil {
		return DF{}, err
	}
	infos, err := l.st.List(ctx)
	if err != nil {
		return DF{}, err
	}
	logical := map[string]int64{}
	for _, i := range infos {
		logical[i.ID] = i.Bytes
	}
	out := DF{Stored: u.Stored, Reachable: u.Reachable, Workspaces: []DFWorkspace{}}
	out.Garbage = gc.Counts{
		Nodes: u.Stored.Nodes - u.Reachable.Nodes, NodeBytes: u.Stored.NodeBytes - u.Reachable.NodeBytes,
		Bodies: u.Stored.Bodies - u.Reachable.Bodies, BodyBytes: u.Stored.BodyBytes - u.Reachable.BodyBytes,
		Blobs: u.Stored.Blobs - u.Reachable.Blobs, BlobBytes: u.Stored.BlobBytes - u.Reachable.BlobBytes,
	}
	for _, w := range u.Workspaces {
		out.Workspaces = append(out.Workspaces, DFWorkspace{
			Name: w.Name, ID: w.ID, LogicalBytes: logical[w.ID],
			ExclusiveBytes: w.Exclusive.Bytes(), SharedBytes: w.Shared.Bytes(),
		})
	}
	return out, nil
}
