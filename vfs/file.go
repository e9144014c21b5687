package vfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sync"

	"github.com/forkspace/forkspace/content"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/meta"
)

// Open flags accepted by OpenFile (the os package's values).
const (
	O_RDONLY = os.O_RDONLY
	O_WRONLY = os.O_WRONLY
	O_RDWR   = os.O_RDWR
	O_APPEND = os.O_APPEND
	O_CREATE = os.O_CREATE
	O_EXCL   = os.O_EXCL
	O_TRUNC  = os.O_TRUNC
)

const accessMask = O_RDONLY | O_WRONLY | O_RDWR

// File is an open file or directory of an FS.
//
// Reads see the file's latest committed contents, or the handle's own
// buffered writes once it has written. Writes are buffered in a
// content.Draft and committed by Sync and Close: when either returns nil the
// data is durable. Concurrent handles on one file do not see each other's
// unsynced writes, and each commit replaces the whole contents, so the last
// committer wins. A handle whose file was removed keeps reading the
// contents it last saw; its later commits are dropped. A handle opened
// before the FS was reset (a restore) is stale: see FS.Reset.
//
// A Write, WriteAt or Truncate that fails for any reason other than its
// arguments or the handle's mode (fs.ErrInvalid, fs.ErrPermission, which
// change nothing) poisons the handle: the writes buffered since the last
// successful Sync are discarded, reads see the committed contents again,
// and every later Write, WriteAt, Truncate, Sync and Close fails with an
// error wrapping the first failure (errors.Is(err, errdefs.ErrQuota) for a
// refused quota). The file keeps what the last successful commit left
// (with O_TRUNC and no successful Sync: its contents before the open).
//
// A File is safe for concurrent use; its operations are serialised.
type File struct {
	fs   *FS
	ctx  context.Context // the opener's values, without its cancellation
	name string
	ino  uint64
	flag int

	mu      sync.Mutex
	closed  bool
	failed  error  // the write failure that poisoned the handle
	gen     uint64 // FS.gen when a, m were loaded
	epoch   uint64 // FS.epoch when opened
	off     int64
	a       attr             // last attributes seen
	m       content.Manifest // last committed contents seen
	draft   *content.Draft   // buffered writes (nil until the first)
	pending *commitState     // committed bytes not yet recorded
	// held are the intents of the draft's background commits ahead
	// (content.Draft.StartAhead), released like pending's.
	held content.Intents
	// deferred is the handle's last deferred commit (its file's
	// creation, a Stage) until it is durable.
	deferred *commitReq
	dir      []fs.DirEntry // entries left to ReadDir (directories)
	dirRead  bool
}

// commitState is a manifest whose bytes are stored but which is not yet
// recorded as the file's contents.
type commitState struct {
	m       content.Manifest
	inline  []meta.Object
	intents content.Intents
}

var (
	_ fs.File        = (*File)(nil)
	_ fs.ReadDirFile = (*File)(nil)
	_ io.ReaderAt    = (*File)(nil)
	_ io.WriterAt    = (*File)(nil)
	_ io.Seeker      = (*File)(nil)
	_ io.Writer      = (*File)(nil)
)

// Open opens name for reading (following symbolic links).
func (f *FS) Open(ctx context.Context, name string) (*File, error) {
	return f.OpenFile(ctx, name, O_RDONLY, 0)
}

// Create creates or truncates name and opens it for reading and writing.
func (f *FS) Create(ctx context.Context, name string) (*File, error) {
	return f.OpenFile(ctx, name, O_RDWR|O_CREATE|O_TRUNC, 0o666)
}

// OpenFile opens name (following symbolic links) with os-style flags:
// O_RDONLY, O_WRONLY or O_RDWR, plus O_CREATE (create with perm when
// missing), O_EXCL (with O_CREATE: fail with fs.ErrExist if name exists,
// even as a dangling link), O_TRUNC (empty the file now, durably) and
// O_APPEND (every Write goes to the end). Directories open read-only
// (errdefs.ErrIsDir otherwise). On a snapshot any write flag is
// errdefs.ErrReadOnly.
func (f *FS) OpenFile(ctx context.Context, name string, flag int, perm fs.FileMode) (*File, error) {
	const op = "open"
	if err := validPath(op, name); err != nil {
		return nil, err
	}
	if _, _, ok := f.virtual(ctx, name); ok {
		if flag&(accessMask|O_CREATE|O_TRUNC|O_APPEND) != O_RDONLY {
			if err := f.hooks.CheckWrite(op, name); err != nil {
				return nil, errdefs.PathError(op, name, err)
			}
		}
		return nil, &fs.PathError{Op: op, Path: name, Err: fmt.Errorf("%w: handles on a virtual mount (use ReadFile/WriteFile)", errors.ErrUnsupported)}
	}
	if flag&O_TRUNC == 0 {
		if err := f.hydrate(ctx, op, name); err != nil {
			return nil, err
		}
	}
	// The handle's own commits wait for the disk: only the creation may
	// be deferred.
	h := &File{fs: f, ctx: noDefer(context.WithoutCancel(ctx)), name: name, flag: flag, epoch: f.epoch.Load()}
	if flag&(accessMask|O_CREATE|O_TRUNC|O_APPEND) == O_RDONLY {
		err := f.read(ctx, op, name, func(t *txn) error {
			n, err := t.lookup(ctx, name, true)
			if err != nil {
				return err
			}
			return h.load(ctx, t, n.ino)
		})
		if err != nil {
			return nil, err
		}
		return h, nil
	}
	var last *txn
	err := f.update(ctx, op, name, func(t *txn) error {
		last = t // its req is the creation's, when deferred
		var (
			ino uint64
			err error
		)
		if flag&O_CREATE != 0 {
			ino, _, err = t.openCreate(ctx, name, UnixMode(perm), flag&O_EXCL != 0)
		} else {
			var n node
			n, err = t.lookupFile(ctx, name)
			ino = n.ino
		}
		if err != nil {
			return err
		}
		return h.load(ctx, t, ino)
	})
	if err != nil {
		return nil, err
	}
	h.deferred = last.req
	if flag&O_TRUNC != 0 {
		// Truncated in the draft: the first commit records it.
		h.draft = f.d.Content.NewDraft(h.m)
		if err := h.draft.Truncate(0); err != nil {
			h.draft.Discard()
			return nil, h.pathErr(op, err)
		}
	}
	return h, nil
}

// load records inode ino's attributes and contents in h. The caller holds
// the FS lock.
func (h *File) load(ctx context.Context, t *txn, ino uint64) error {
	h.gen = t.f.gen.Load()
	a, err := t.attr(ctx, ino)
	if err != nil {
		return err
	}
	if a.typ.special() {
		return errSpecial(a.typ)
	}
	m, err := t.manifest(ctx, ino)
	if err != nil {
		return err
	}
	h.ino, h.a, h.m = ino, a, m
	return nil
}

// refresh reloads the inode's committed state if anything changed since it
// was loaded; a removed inode keeps what the handle saw last.
func (h *File) refresh() error {
	if h.fs.gen.Load() == h.gen {
		return nil
	}
	err := h.fs.read(h.ctx, "read", h.name, func(t *txn) error { return h.load(h.ctx, t, h.ino) })
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	return err
}

func (h *File) pathErr(op string, err error) error {
	return errdefs.PathError(op, h.name, err)
}

// begin locks h and checks it is open.
func (h *File) begin(op string) error {
	h.mu.Lock()
	if h.closed {
		h.mu.Unlock()
		return &fs.PathError{Op: op, Path: h.name, Err: fs.ErrClosed}
	}
	if op != "close" {
		if err := h.stale(op); err != nil {
			h.mu.Unlock()
			return err
		}
	}
	return nil
}

// beginWrite is begin for an operation that changes the handle's buffer
// or commits it: a poisoned handle fails with its first failure.
func (h *File) beginWrite(op string) error {
	if err := h.begin(op); err != nil {
		return err
	}
	if h.failed != nil {
		h.mu.Unlock()
		return h.failure(op)
	}
	return nil
}

// failure is the error of op on a poisoned handle.
func (h *File) failure(op string) error {
	return h.pathErr(op, fmt.Errorf("handle poisoned, its uncommitted writes discarded: %w", h.failed))
}

// poison records a write failure: what the handle buffered since its last
// commit is discarded and every later write or commit fails with err.
// Refusals of the arguments or of the handle's mode change nothing and do
// not poison. It returns err.
func (h *File) poison(err error) error {
	if err == nil || errors.Is(err, fs.ErrInvalid) || errors.Is(err, fs.ErrPermission) {
		return err
	}
	h.failed = err
	if h.draft != nil {
		err = errors.Join(err, h.draft.Discard())
		h.draft = nil
	}
	return errors.Join(err, h.release())
}

// release releases the intents of the handle's unrecorded commits.
func (h *File) release() error {
	in := h.held
	if h.pending != nil {
		in = append(in, h.pending.intents...)
	}
	h.pending, h.held = nil, nil
	return h.fs.d.Content.Release(context.WithoutCancel(h.ctx), in)
}

// Poisoned reports whether a write failure poisoned h (see File): its
// buffered writes are discarded, it has nothing left to commit, and its
// later writes and commits (Flush, Stage, Sync, Close) fail with that
// failure and change nothing.
func (h *File) Poisoned() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.failed != nil
}

// Read reads from the current offset.
func (h *File) Read(p []byte) (int, error) {
	if err := h.begin("read"); err != nil {
		return 0, err
	}
	defer h.mu.Unlock()
	n, err := h.readAt(p, h.off)
	h.off += int64(n)
	return n, err
}

// Bounds of the buffer WriteTo reads through.
const (
	minCopyBuf = 4 << 10
	maxCopyBuf = 256 << 10
)

// WriteTo writes the file from the current offset to its end to w
// (io.WriterTo), reading through a buffer sized to what is left, between
// minCopyBuf and maxCopyBuf: io.Copy from a File then allocates no 32 KiB
// buffer for a file of a few bytes.
func (h *File) WriteTo(w io.Writer) (int64, error) {
	if err := h.begin("read"); err != nil {
		return 0, err
	}
	size, err := h.size()
	left := size - h.off
	h.mu.Unlock()
	if err != nil {
		return 0, err
	}
	buf := make([]byte, min(max(left, minCopyBuf), maxCopyBuf))
	return io.CopyBuffer(w, struct{ io.Reader }{h}, buf)
}

// ReadAt reads len(p) bytes at off with io.ReaderAt semantics.
func (h *File) ReadAt(p []byte, off int64) (int, error) {
	if err := h.begin("read"); err != nil {
		return 0, err
	}
	defer h.mu.Unlock()
	return h.readAt(p, off)
}

func (h *File) readAt(p []byte, off int64) (int, error) {
	switch {
	case h.flag&accessMask == O_WRONLY:
		return 0, h.pathErr("read", fmt.Errorf("%w: opened write-only", fs.ErrPermission))
	case h.a.typ == typeDir:
		return 0, h.pathErr("read", errdefs.ErrIsDir)
	case off < 0:
		return 0, h.pathErr("read", fmt.Errorf("%w: negative offset", fs.ErrInvalid))
	}
	if h.draft != nil {
		n, err := h.draft.ReadAt(h.ctx, p, off)
		return n, h.readErr(err)
	}
	if err := h.refresh(); err != nil {
		return 0, err
	}
	if off >= h.m.Size {
		return 0, io.EOF
	}
	n, err := h.fs.d.Content.ReadAt(h.ctx, h.m, p, off)
	return n, h.readErr(err)
}

func (h *File) readErr(err error) error {
	if err == nil || err == io.EOF {
		return err
	}
	return h.pathErr("read", err)
}

// Seek sets the offset for the next Read or Write (io.Seeker).
func (h *File) Seek(offset int64, whence int) (int64, error) {
	if err := h.begin("seek"); err != nil {
		return 0, err
	}
	defer h.mu.Unlock()
	switch whence {
	case io.SeekStart:
	case io.SeekCurrent:
		offset += h.off
	case io.SeekEnd:
		size, err := h.size()
		if err != nil {
			return 0, err
		}
		offset += size
	default:
		return 0, h.pathErr("seek", fmt.Errorf("%w: bad whence %d", fs.ErrInvalid, whence))
	}
	if offset < 0 {
		return 0, h.pathErr("seek", fmt.Errorf("%w: negative offset", fs.ErrInvalid))
	}
	h.off = offset
	return offset, nil
}

// size returns the handle's current file size.
func (h *File) size() (int64, error) {
	if h.draft != nil {
		return h.draft.Size(), nil
	}
	if err := h.refresh(); err != nil {
		return 0, err
	}
	return h.m.Size, nil
}

// Write writes at the current offset, or at the end with O_APPEND.
func (h *File) Write(p []byte) (int, error) {
	if err := h.beginWrite("write"); err != nil {
		return 0, err
	}
	defer h.mu.Unlock()
	if h.flag&O_APPEND != 0 {
		if err := h.startDraft(); err != nil {
			return 0, h.poison(err)
		}
		h.off = h.draft.Size()
	}
	n, err := h.writeAt(p, h.off)
	h.off += int64(n)
	return n, h.poison(err)
}

// WriteAt writes p at off (not allowed with O_APPEND).
func (h *File) WriteAt(p []byte, off int64) (int, error) {
	if err := h.beginWrite("write"); err != nil {
		return 0, err
	}
	defer h.mu.Unlock()
	if h.flag&O_APPEND != 0 {
		return 0, h.pathErr("write", fmt.Errorf("%w: WriteAt on a file opened with O_APPEND", fs.ErrInvalid))
	}
	n, err := h.writeAt(p, off)
	return n, h.poison(err)
}

func (h *File) writeAt(p []byte, off int64) (int, error) {
	if off < 0 {
		return 0, h.pathErr("write", fmt.Errorf("%w: negative offset", fs.ErrInvalid))
	}
	if err := h.startDraft(); err != nil {
		return 0, err
	}
	if len(p) == 0 {
		return 0, nil // nothing written, nothing grows
	}
	if err := h.checkGrowth(max(h.draft.Size(), off+int64(len(p)))); err != nil {
		return 0, err
	}
	n, err := h.draft.WriteAt(p, off)
	if err != nil {
		return n, h.pathErr("write", err)
	}
	if h.draft.BufferedSinceCommit() >= commitAhead {
		// The draft stores what it holds on another goroutine while the
		// application writes the next bytes; a failure of the previous
		// one fails this write.
		in, err := h.draft.StartAhead(h.ctx)
		h.held = append(h.held, in...)
		if err != nil {
			return n, h.pathErr("write", err)
		}
	}
	return n, nil
}

// commitAhead is how many written bytes a handle buffers, past what its
// last commit ahead kept, before it commits them ahead to the content
// store in the background (the chunks they decide put, recorded in
// metadata only at Sync or Close; the bytes after the last sure boundary
// stay buffered): a large file's bytes then go from the application's
// buffer to chunks while it writes the next ones, each chunk stored once
// and none read back, and the handle's memory stays bounded (two
// windows: the one being written and the one being stored).
const commitAhead = 16 << 20

// commitDraft commits the draft to the content store as the handle's
// pending state, superseding an earlier pending commit (whose intents,
// and those of the draft's commits ahead, are released with this one's).
func (h *File) commitDraft() error {
	m, inline, in, err := h.draft.Commit(h.ctx)
	if err != nil {
		return err
	}
	next := &commitState{m: m, inline: inline, intents: append(in, h.held...)}
	if h.pending != nil {
		next.intents = append(next.intents, h.pending.intents...)
	}
	h.pending, h.held = next, nil
	return nil
}

// startDraft checks the handle may write and starts buffering over the
// latest committed contents.
func (h *File) startDraft() error {
	if h.flag&accessMask == O_RDONLY {
		return h.pathErr("write", fmt.Errorf("%w: opened read-only", fs.ErrPermission))
	}
	if h.draft != nil {
		return nil
	}
	if err := h.refresh(); err != nil {
		return err
	}
	h.draft = h.fs.d.Content.NewDraft(h.m)
	return nil
}

// checkGrowth fails with errdefs.ErrQuota when the file growing to size
// would pass the byte quota.
func (h *File) checkGrowth(size int64) error {
	q := h.fs.quota.MaxBytes
	if q <= 0 || size <= h.m.Size {
		return nil
	}
	u, err := h.fs.Usage(h.ctx)
	if err != nil {
		return err
	}
	if u.Bytes+size-h.m.Size > q {
		return h.pathErr("write", fmt.Errorf("%w: file of %d bytes passes limit %d", errdefs.ErrQuota, size, q))
	}
	return nil
}

// Rebase drops the handle's buffer when everything in it is committed,
// so that its next read or write starts over the file's latest committed
// contents: a commit another handle made since this one's is then seen,
// and kept by this one's next commit instead of replaced. With writes not
// committed yet it changes nothing (dropping them would lose them; the
// caller commits first). A FUSE mount calls it on a descriptor when
// another descriptor of the file has committed since this one last did.
func (h *File) Rebase() error {
	if err := h.begin("rebase"); err != nil {
		return err
	}
	defer h.mu.Unlock()
	if h.draft == nil || h.draft.Dirty() || h.pending != nil {
		return nil
	}
	h.draft.Discard()
	h.draft = nil
	return nil
}

// Truncate changes the file's size in the handle's buffer (committed by
// Sync or Close).
func (h *File) Truncate(size int64) error {
	if err := h.beginWrite("truncate"); err != nil {
		return err
	}
	defer h.mu.Unlock()
	if size < 0 {
		return h.pathErr("truncate", fmt.Errorf("%w: negative size", fs.ErrInvalid))
	}
	return h.poison(h.truncate(size))
}

func (h *File) truncate(size int64) error {
	if err := h.startDraft(); err != nil {
		return err
	}
	if err := h.checkGrowth(size); err != nil {
		return err
	}
	if err := h.draft.Truncate(size); err != nil {
		return h.pathErr("truncate", err)
	}
	return nil
}

// Flush commits the handle's buffered writes like Close and keeps the
// handle open: when Flush returns nil they are visible to every reader
// and survive the death of the process, not a power loss (Sync). A
// failed Flush keeps the data buffered for a retry; on a poisoned handle
// it fails with the write failure.
func (h *File) Flush() error {
	if err := h.beginWrite("flush"); err != nil {
		return err
	}
	defer h.mu.Unlock()
	return h.sync()
}

// Sync commits the handle's buffered writes like Close, then waits for the
// disk: when Sync returns nil the file's data and everything committed
// before survive a power loss (the store's durability barrier, meta.Sync;
// docs/decisions/021). A failed Sync (quota, I/O) keeps the data buffered
// for a retry; on a poisoned handle Sync fails with the write failure.
func (h *File) Sync() error {
	if err := h.beginWrite("sync"); err != nil {
		return err
	}
	defer h.mu.Unlock()
	if err := h.sync(); err != nil {
		return err
	}
	if err := meta.Sync(h.ctx, h.fs.d.Meta); err != nil {
		return h.pathErr("sync", err)
	}
	return nil
}

func (h *File) sync() error {
	return h.commit(false)
}

// Stage commits the handle's buffered writes like Flush but returns
// before they are durable (WithDeferredCommit): they commit with the next
// mutation or read of the FS, or a moment later, and the handle's next
// Flush, Sync or Close waits for them and reports their failure. Other
// readers see them once durable; a FUSE mount's own requests at once
// (SeeDeferred). A FUSE mount stages a handle's writes before setting
// the file's times, so the commit does not set them again, and the close
// carries the whole.
func (h *File) Stage() error {
	if err := h.beginWrite("flush"); err != nil {
		return err
	}
	defer h.mu.Unlock()
	return h.commit(true)
}

// commit records the handle's buffered writes, deferred or not.
func (h *File) commit(deferred bool) error {
	if h.draft != nil && (h.draft.Dirty() || h.pending != nil || len(h.held) > 0) {
		if err := h.commitDraft(); err != nil {
			return h.pathErr("sync", err)
		}
	}
	if h.pending == nil {
		if deferred {
			return nil
		}
		return h.settleDeferred()
	}
	p := h.pending
	ctx := h.ctx
	if deferred {
		ctx = WithDeferredCommit(ctx)
	}
	var last *txn
	err := h.fs.updateContent(ctx, "sync", h.name, p.intents, func(t *txn) error {
		last = t
		if err := h.stale("sync"); err != nil {
			return err
		}
		a, err := t.attr(h.ctx, h.ino)
		if errors.Is(err, fs.ErrNotExist) {
			return nil // removed while open: nothing to record
		}
		if err != nil {
			return err
		}
		if err := t.setContent(h.ctx, h.ino, &a, p.m, p.inline); err != nil {
			return err
		}
		h.a = a
		return nil
	})
	if err != nil {
		return err
	}
	h.m, h.pending = p.m, nil
	if deferred {
		if last.req != nil && !h.deferred.failed() {
			h.deferred = last.req
		}
		return nil
	}
	return h.settleDeferred()
}

// settleDeferred waits for the handle's deferred commits (its file's
// creation, a Stage: WithDeferredCommit) to be durable: a commit of the
// handle queued after them has carried them, or they commit now. Their
// failure is the handle's (after a failed creation the file does not
// exist).
func (h *File) settleDeferred() error {
	if h.deferred == nil {
		return nil
	}
	if err := h.fs.settleReq(h.deferred); err != nil {
		return h.pathErr("sync", err)
	}
	h.deferred = nil
	return nil
}

// Close commits buffered writes and releases the handle: new chunks go to
// the blob store, then one metadata transaction records the manifest,
// size, times and usage. When Close returns nil the data survives the
// death of the process (it is in the operating system); a power loss only
// after a Sync (docs/decisions/021). The handle is closed even when the
// commit fails; the error is returned and
// nothing of the failed commit is recorded. A poisoned handle commits
// nothing and returns its write failure. A second Close is fs.ErrClosed.
func (h *File) Close() error {
	if err := h.begin("close"); err != nil {
		return err
	}
	defer h.mu.Unlock()
	h.closed = true
	var err error
	if h.failed != nil {
		err = h.failure("close")
	} else {
		err = h.sync()
	}
	if h.draft != nil {
		// Waits for a commit ahead still running, and releases its
		// intents unless the commit returned them.
		err = errors.Join(err, h.draft.Discard())
		h.draft = nil
	}
	if err != nil {
		err = errors.Join(err, h.release())
	}
	return err
}

// Stat returns the file's attributes, including the size of unsynced
// writes.
func (h *File) Stat() (fs.FileInfo, error) {
	if err := h.begin("stat"); err != nil {
		return nil, err
	}
	defer h.mu.Unlock()
	if err := h.refresh(); err != nil {
		return nil, err
	}
	fi := &fileInfo{name: path.Base(h.name), ino: h.ino, a: h.a}
	if h.draft != nil {
		fi.a.size = h.draft.Size()
	}
	return fi, nil
}

// ReadDir reads directory entries in name order, like fs.ReadDirFile: with
// n > 0 at most n entries and io.EOF at the end; with n <= 0 all remaining
// entries. A non-directory is errdefs.ErrNotDir.
func (h *File) ReadDir(n int) ([]fs.DirEntry, error) {
	if err := h.begin("readdir"); err != nil {
		return nil, err
	}
	defer h.mu.Unlock()
	if h.a.typ != typeDir {
		return nil, h.pathErr("readdir", errdefs.ErrNotDir)
	}
	if !h.dirRead {
		err := h.fs.read(h.ctx, "readdir", h.name, func(t *txn) error {
			var err error
			h.dir, err = t.readDir(h.ctx, h.ino)
			return err
		})
		if err != nil {
			return nil, err
		}
		h.dirRead = true
	}
	if n <= 0 {
		out := h.dir
		h.dir = nil
		return out, nil
	}
	if len(h.dir) == 0 {
		return nil, io.EOF
	}
	n = min(n, len(h.dir))
	out := h.dir[:n:n]
	h.dir = h.dir[n:]
	return out, nil
}
