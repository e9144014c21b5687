package mount

import (
	"context"
	"github.com/forkspace/forkspace/vfs"
	"io/fs"
	"time"
)

// Mount is an external content source attached at a workspace subtree. A
// mount is Lazy, Eager or Virtual (exactly one), optionally Writable.
type Mount interface {
	// Kind names the source type ("s3", "git", "hostdir", "memory",
	// "bundle", …).
	Kind() string
}

// Entry is one file of a lazy mount's listing.
type Entry struct {
	// Path is slash-separated and relative to the mount root ("a/b.txt").
	Path string
	Size int64
	// Mode holds the permission bits and fs.ModeSymlink for a symlink.
	Mode    fs.FileMode
	ModTime time.Time
	// Version identifies the upstream revision (an S3 ETag, a size+mtime
	// pair); Refresh compares it, write-back sends it as a precondition.
	Version string
	// Target is a symlink's target.
	Target string
}

// Lazy mounts are listed once and fetched file by file on first read.
type Lazy interface {
	Mount
	// List enumerates the source. It is called once per index (and by
	// Refresh). Errors leave the workspace untouched.
	List(ctx context.Context) ([]Entry, error)
	// Fetch returns one file's bytes. A missing file is fs.ErrNotExist.
	Fetch(ctx context.Context, rel string) ([]byte, error)
}

// Eager mounts write their whole tree at index time.
type Eager interface {
	Mount
	Materialize(ctx context.Context, api WriteAPI) error
}

// WriteAPI is what an eager mount writes through. Paths are relative to
// the mount root; parents are created as needed.
type WriteAPI interface {
	WriteFile(rel string, data []byte, mode fs.FileMode) error
	Mkdir(rel string, mode fs.FileMode) error
	Symlink(target, rel string) error
}

// Writable mounts accept write-back. Both methods take a precondition,
// ifVersion: the version the workspace last saw (S3 If-Match), or
// Unconditional. A source that supports preconditions fails with
// errdefs.ErrConflict when it does not hold.
type Writable interface {
	// Put stores a file and returns its new version. ifVersion "" means
	// the file is new: nothing may exist at rel (S3 If-None-Match: *).
	Put(ctx context.Context, rel string, data []byte, ifVersion string) (version string, err error)
	// Delete removes a file; a missing file is not an error. ifVersion ""
	// is Unconditional.
	Delete(ctx context.Context, rel, ifVersion string) error
}

// PageLister is a Lazy mount that lists in pages: the index sees each page
// as it arrives (page) and stops the listing when page fails (a cap was
// passed: errdefs.ErrQuota), instead of listing everything first. The
// entries returned are List's.
type PageLister interface {
	ListPages(ctx context.Context, page func([]Entry) error) ([]Entry, error)
}

// PrefixLister is a Lazy mount that can list below one directory (rel,
// relative to the root) without listing the whole source; write-back uses
// it to find what lay below a removed directory.
type PrefixLister interface {
	ListPrefix(ctx context.Context, rel string) ([]Entry, error)
}

// Virtual mounts are served live on every access and never persisted: not
// exported, not collected, not counted in quotas, shared by reference with
// forks. Paths are relative to the mount root; "." is the root.
type Virtual interface {
	Mount
	Stat(ctx context.Context, rel string) (fs.FileInfo, error)
	ReadDir(ctx context.Context, rel string) ([]fs.DirEntry, error)
	ReadFile(ctx context.Context, rel string) ([]byte, error)
}

// VirtualWriter is a Virtual mount that accepts writes (when mounted
// read-write).
type VirtualWriter interface {
	Virtual
	WriteFile(ctx context.Context, rel string, data []byte, perm fs.FileMode) error
	Remove(ctx context.Context, rel string) error
}

// Context is what a Factory receives on first index.
type Context struct {
	// SessionID scopes per-session mounts. The store has no sessions: a
	// workspace it opens is shared by whoever opens it, so the root
	// package sets the workspace's name here (for a provider's session
	// workspace that is its session-derived name, e.g. "session-" plus
	// the ID, see localprovider.SessionWorkspace), and a host attaching a
	// Manager itself sets what it likes.
	SessionID string
	// Root is the absolute mount root ("/data"), without a trailing slash.
	Root string
	// WorkspaceID identifies the workspace (a fork has its own).
	WorkspaceID string
	// FS is the workspace's filesystem, for factories that read workspace
	// state to decide what to mount (the seed's vfs handle). Use it with
	// the ctx the factory is given: the factory runs inside the first
	// index, so paths under mount roots fail with errdefs.ErrBusy, and an
	// operation with another context on a path under or above a mount
	// root would wait for the index that is running the factory.
	FS *vfs.FS
}

// Factory builds a mount on first index, so a per-session mount can derive
// a scoped prefix or branch from the session. It is called again for a
// fork, with the fork's session.
type Factory func(ctx context.Context, mc Context) (Mount, error)

// Mode is a mount's access mode.
type Mode string

const (
	ReadOnly  Mode = "read-only"
	ReadWrite Mode = "read-write"
)

// WriteBack selects how workspace writes reach a read-write mount.
type WriteBack string

const (
	// Debounce holds a path for WriteBackMs after its last mutation and
	// then mirrors only its final state (one Put per burst).
	Debounce WriteBack = "debounce"
	// Manual mirrors only on Flush.
	Manual WriteBack = "manual"
)

// Options apply to every mount. The zero value means the defaults.
type Options struct {
	Mode Mode // default ReadOnly
	// Ignore lists path segments hidden from the mount (composed with the
	// workspace-wide ignore list).
	Ignore      []string
	WriteBack   WriteBack // default Debounce
	WriteBackMs int       // default 500
	// MaxBytes and MaxEntries cap what an index may bring in; exceeding
	// either fails the index before anything lands.
	MaxBytes   int64
	MaxEntries int64
	// ForkWriteBack lets a fork of the workspace write back to a
	// read-write source too. By default a fork's copy of a read-write
	// mount is local-only: writes stay in the fork.
	ForkWriteBack bool
}

// Spec is one row of a workspace's mount table: a mount (or a factory) at
// an absolute root.
type Spec struct {
	Root    string
	Mount   Mount   // exactly one of Mount and Factory
	Factory Factory //
	Options Options
	// Source is the URL the spec was parsed from, without credentials,
	// persisted so a restart can rebuild the mount ("" for mounts built in
	// code, which the host program passes again on reopen).
	Source string
}

// Conflict describes two writers disagreeing about a path.
type Conflict struct {
	Root    string
	RelPath string
	// Reason: "upstream-changed" (a precondition failed), "put-failed",
	// "command-overwrote" (a shell command's state replaced a direct write),
	// "read-only" (a change under a read-only mount was dropped).
	Reason string
	Err    error
}

// Resolution is a conflict hook's answer.
type Resolution string

const (
	// Accept keeps the default outcome (the command's or the workspace's
	// state is mirrored).
	Accept Resolution = "accept"
	// KeepLocal keeps the workspace's direct write and skips the mirror;
	// given to Manager.Resolve, it force-pushes the workspace's state.
	KeepLocal Resolution = "keep-local"
	// TakeUpstream, given to Manager.Resolve, drops the local change and
	// takes the source's state.
	TakeUpstream Resolution = "take-upstream"
)

// ConflictHook is called for every conflict; nil accepts.
type ConflictHook func(Conflict) Resolution
