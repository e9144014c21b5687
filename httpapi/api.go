package httpapi

import (
	"context"
	"io"
	"io/fs"
	"strconv"
	"strings"
	"time"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/audit"
	"github.com/forkspace/forkspace/auth"
	"github.com/forkspace/forkspace/execpolicy"
	"github.com/forkspace/forkspace/gc"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/provider"
	"github.com/forkspace/forkspace/vfs"
)

// API is everything the REST API offers, as Go calls. Local implements it
// over an open store, Client over HTTP; the server is a thin adapter from
// HTTP to any API, and the command line is written once against it.
//
// A state is "WORKSPACE" (the live head) or "WORKSPACE@CHECKPOINT" (a
// read-only view: writes fail with errdefs.ErrReadOnly); a workspace is a
// name or an ID. Paths are workspace paths, cleaned with vfs.CleanPath
// (a ".." leaving the workspace is fs.ErrInvalid). Errors are the io/fs
// and errdefs sentinels of the library, on both implementations.
type API interface {
	// ListWorkspaces returns a page of workspaces ordered by name.
	ListWorkspaces(ctx context.Context, p PageRequest) (WorkspacePage, error)
	// CreateWorkspace creates an empty workspace.
	CreateWorkspace(ctx context.Context, r CreateRequest) (forkspace.Info, error)
	// WorkspaceInfo describes a workspace, with its exclusive and shared
	// bytes.
	WorkspaceInfo(ctx context.Context, ws string) (forkspace.Info, error)
	// DeleteWorkspace deletes a workspace, its checkpoints and its exec
	// work dir; forks are untouched.
	DeleteWorkspace(ctx context.Context, ws string) error
	// ForkWorkspace forks state src (a live head or a checkpoint).
	ForkWorkspace(ctx context.Context, src string, r ForkRequest) (forkspace.Info, error)
	// Parent returns the state workspace ws was forked from
	// (fs.ErrNotExist if none).
	Parent(ctx context.Context, ws string) (string, error)

	// Checkpoints lists a workspace's checkpoints, oldest first.
	Checkpoints(ctx context.Context, ws string) ([]forkspace.Checkpoint, error)
	// Checkpoint records the live state of ws under label.
	Checkpoint(ctx context.Context, ws, label string) (forkspace.Checkpoint, error)
	// Restore points ws back at checkpoint cp (ID or label).
	Restore(ctx context.Context, ws, cp string) error
	// Diff compares two states; the changes are a script (vfs.Diff).
	Diff(ctx context.Context, from, to string, unified bool) ([]vfs.Change, error)

	// Stat describes the entry at p without following a final link.
	Stat(ctx context.Context, state, p string) (Entry, error)
	// ReadDir returns a page of directory p's entries, by name.
	ReadDir(ctx context.Context, state, p string, r PageRequest) (DirPage, error)
	// Open opens file p for reading, from r.Offset for r.Length bytes
	// (-1: to the end). When r.IfNoneMatch matches the file's ETag it
	// fails with ErrNotModified; a range past the end is ErrRange.
	Open(ctx context.Context, state, p string, r ReadRequest) (*Download, error)
	// Write replaces file p with everything body yields, atomically: when
	// body fails, ctx ends, the quota refuses or a condition does not
	// hold (ErrPrecondition), nothing changes and a new file is not
	// created. The conditions hold at commit, not only at the start.
	Write(ctx context.Context, state, p string, body io.Reader, r WriteRequest) (Entry, error)
	// Remove removes p; recursive removes a tree.
	Remove(ctx context.Context, state, p string, recursive bool) error
	// Rename moves from to to (to is the new path itself).
	Rename(ctx context.Context, state, from, to string) error
	// Mkdir creates directory p; parents creates missing parents and
	// accepts an existing directory.
	Mkdir(ctx context.Context, state, p string, parents bool) error
	// Glob and Grep run the glob and grep tools (their arguments and
	// their text).
	Glob(ctx context.Context, state string, r GlobRequest) (ToolText, error)
	Grep(ctx context.Context, state string, r GrepRequest) (ToolText, error)

	// Exec runs a command in the sandbox against ws, copying its output
	// to stdout and stderr as it comes (nil: not copied).
	Exec(ctx context.Context, ws string, r provider.ExecRequest, stdout, stderr io.Writer) (provider.ExecResult, error)
	// ExecPolicy returns ws's exec policy (package execpolicy; zero:
	// none); SetExecPolicy replaces it (zero clears it) and returns it.
	ExecPolicy(ctx context.Context, ws string) (execpolicy.Policy, error)
	SetExecPolicy(ctx context.Context, ws string, p execpolicy.Policy) (execpolicy.Policy, error)

	// Merge merges state r.From into ws, three-way (forkspace.Merge);
	// with the fail policy and conflicts it returns them and an error
	// matching errdefs.ErrConflict, and nothing changes.
	Merge(ctx context.Context, ws string, r MergeRequest) (forkspace.MergeResult, error)
	// CherryPick brings paths of a state into ws (forkspace.CherryPick).
	CherryPick(ctx context.Context, ws string, r CherryPickRequest) (forkspace.MergeResult, error)
	// RestorePaths brings paths of ws back to a checkpoint's.
	RestorePaths(ctx context.Context, ws string, r RestorePathsRequest) (forkspace.MergeResult, error)
	// Conflicts lists ws's unresolved merge conflicts.
	Conflicts(ctx context.Context, ws string) ([]forkspace.Conflict, error)
	// Resolve settles one conflict and returns how many are left.
	Resolve(ctx context.Context, ws string, r ConflictResolution) (int, error)

	// ForkN forks ws's live state r.N ways (forkspace.ForkN) and
	// describes the forks, by name.
	ForkN(ctx context.Context, ws string, r ForkNRequest) ([]forkspace.Info, error)
	// Compare diffs states pairwise (forkspace.Compare).
	Compare(ctx context.Context, states []string, unified bool) (forkspace.Comparison, error)
	// Promote merges fork winner into its parent, or makes it the
	// parent's head, and deletes the other forks of the same ForkN
	// (forkspace.Promote).
	Promote(ctx context.Context, winner string, r PromoteRequest) (forkspace.PromoteResult, error)

	// Mounts describes ws's mounts.
	Mounts(ctx context.Context, ws string) ([]forkspace.MountInfo, error)
	// MountAction flushes, refreshes or prefetches root ("" all mounts).
	MountAction(ctx context.Context, ws string, action MountAction, root string) error
	// ResolveMount settles the write-back conflict at path p.
	ResolveMount(ctx context.Context, ws, p string, keepLocal bool) error

	// ImportTar unpacks a tar stream (plain or gzip) into directory to,
	// atomically (transfer.ImportTar).
	ImportTar(ctx context.Context, ws, to string, tar io.Reader) (TransferSummary, error)
	// ExportTar writes directory or file from of state as a PAX tar
	// stream to w (transfer.ExportTar).
	ExportTar(ctx context.Context, state, from string, w io.Writer) (TransferSummary, error)

	// Audit returns audit entries, newest first (ws: a workspace name or
	// ID, "" for all).
	Audit(ctx context.Context, ws string, f audit.Filter) ([]audit.Entry, error)
	// History lists ws's audited steps, newest first, with the state
	// each left (forkspace.Store.History).
	History(ctx context.Context, ws string, opts forkspace.HistoryOptions) ([]forkspace.Step, error)
	// Events subscribes to the change feed of ws ("" every workspace),
	// the changes touching path p ("" all), after sequence number since
	// (Now: the newest); ErrTooOld when the feed cannot continue from
	// there.
	Events(ctx context.Context, ws, p string, since int64) (EventStream, error)
	// GC plans (DryRun) or runs a garbage collection.
	GC(ctx context.Context, r GCRequest) (GCResult, error)
	// Fsck verifies the store; damage is in the report, not an error.
	Fsck(ctx context.Context) (*gc.CheckReport, error)
	// DF reports the store's space use.
	DF(ctx context.Context) (DF, error)

	// CreateToken mints a token no wider than the caller's (any, for the
	// store's owner); its secret is in the result only.
	CreateToken(ctx context.Context, r auth.Request) (auth.Created, error)
	// Tokens lists the tokens the caller manages (auth.Tokens.List).
	Tokens(ctx context.Context) ([]auth.Info, error)
	// RevokeToken revokes a token the caller manages, and every token
	// minted from it.
	RevokeToken(ctx context.Context, id string) error
}

// PageRequest asks for one page: entries after Cursor (the Next of the
// previous page, "" for the first), at most Limit (0: DefaultLimit; at
// most MaxLimit).
type PageRequest struct {
	Cursor string
	Limit  int
}

// Page sizes.
const (
	DefaultLimit = 1000
	MaxLimit     = 10000
)

// WorkspacePage is one page of workspaces. Next is the cursor of the
// following page, "" after the last.
type WorkspacePage struct {
	Workspaces []forkspace.Info `json:"workspaces"`
	Next       string           `json:"next,omitempty"`
}

// DirPage is one page of a directory's entries.
type DirPage struct {
	Entries []Entry `json:"entries"`
	Next    string  `json:"next,omitempty"`
}

// CreateRequest creates a workspace. Mounts are ROOT=URL specs, as
// `forkspace workspace create --mount` takes them.
type CreateRequest struct {
	Name   string     `json:"name"`
	Quota  meta.Quota `json:"quota,omitzero"`
	Mounts []string   `json:"mounts,omitempty"`
}

// ForkRequest names a fork; a zero Quota inherits the source's.
type ForkRequest struct {
	Name  string     `json:"name"`
	Quota meta.Quota `json:"quota,omitzero"`
}

// Entry describes one file, directory or symbolic link (the JSON shape of
// `forkspace stat --json`).
type Entry struct {
	Name   string    `json:"name"`
	Path   string    `json:"path"`
	Type   string    `json:"type"` // "file", "dir" or "symlink"
	Mode   string    `json:"mode"` // octal permission and special bits, e.g. "0644"
	Size   int64     `json:"size"`
	Mtime  time.Time `json:"mtime"`
	Atime  time.Time `json:"atime"`
	Ctime  time.Time `json:"ctime"`
	Ino    uint64    `json:"ino"`
	Nlink  uint32    `json:"nlink"`
	UID    uint32    `json:"uid"`
	GID    uint32    `json:"gid"`
	Target string    `json:"target,omitempty"` // symlink target
	ETag   string    `json:"etag,omitempty"`   // regular files: the ETag of their contents
}

// NewEntry describes fi found at path p (target: a symlink's target).
func NewEntry(p string, fi fs.FileInfo, target string) Entry {
	e := Entry{
		Name: fi.Name(), Path: p, Type: typeName(fi.Mode()), Mode: octal4(vfs.UnixMode(fi.Mode())),
		Size: fi.Size(), Mtime: fi.ModTime().UTC(), Target: target,
	}
	if a, ok := fi.Sys().(*vfs.Attr); ok {
		e.Atime, e.Ctime = a.Atime.UTC(), a.Ctime.UTC()
		e.Ino, e.Nlink, e.UID, e.GID = a.Ino, a.Nlink, a.Uid, a.Gid
	}
	if fi.Mode().IsRegular() {
		e.ETag = etag(fi)
	}
	return e
}

// octal4 writes permission and special bits as four octal digits
// ("0644").
func octal4(m uint32) string {
	o := strconv.FormatUint(uint64(m), 8)
	return strings.Repeat("0", max(0, 4-len(o))) + o
}

// FileMode returns the entry's type and permission bits as an fs.FileMode.
func (e Entry) FileMode() fs.FileMode {
	u, _ := strconv.ParseUint(e.Mode, 8, 32)
	m := fs.FileMode(u & 0o777)
	for bit, fm := range map[uint64]fs.FileMode{0o4000: fs.ModeSetuid, 0o2000: fs.ModeSetgid, 0o1000: fs.ModeSticky} {
		if u&bit != 0 {
			m |= fm
		}
	}
	switch e.Type {
	case "dir":
		m |= fs.ModeDir
	case "symlink":
		m |= fs.ModeSymlink
	}
	return m
}

func typeName(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "dir"
	case m&fs.ModeSymlink != 0:
		return "symlink"
	}
	return "file"
}

// etag is the strong entity tag of a regular file: its inode, size and
// modification and change times to the nanosecond. Every write changes
// the change time, and a restored state carries the times it had.
func etag(fi fs.FileInfo) string {
	ino, ctime := uint64(0), int64(0)
	if a, ok := fi.Sys().(*vfs.Attr); ok {
		ino, ctime = a.Ino, a.Ctime.UnixNano()
	}
	b := make([]byte, 0, 64)
	b = strconv.AppendUint(append(b, '"'), ino, 16)
	b = strconv.AppendInt(append(b, '-'), fi.Size(), 16)
	b = strconv.AppendInt(append(b, '-'), fi.ModTime().UnixNano(), 16)
	b = strconv.AppendInt(append(b, '-'), ctime, 16)
	return string(append(b, '"'))
}

// ReadRequest selects the bytes Open returns.
type ReadRequest struct {
	Offset int64
	// Length is the number of bytes from Offset; -1 (or 0 with
	// Offset 0 and no range) reads to the end. Set Ranged for a
	// request that asked for a range (so an empty file's range is
	// ErrRange, as HTTP wants).
	Length int64
	Ranged bool
	// Suffix, when positive, asks for the last Suffix bytes instead
	// (Range: bytes=-N).
	Suffix int64
	// IfRange, when set, is the ETag the range is for: if the file has
	// another, the whole file is read instead (HTTP If-Range).
	IfRange string
	// IfNoneMatch lists ETags ("*" matches any); a match is
	// ErrNotModified.
	IfNoneMatch []string
}

// Download is an open file: its entry, the range being read and the
// bytes. Close it.
type Download struct {
	Entry  Entry
	Offset int64
	Length int64
	Ranged bool // a range of the file, not all of it
	io.ReadCloser
}

// WriteRequest qualifies a write.
type WriteRequest struct {
	// Perm of a new file (default 0644; an existing file keeps its mode
	// unless Perm is set).
	Perm fs.FileMode
	// IfMatch lists ETags the current file must have ("*": any existing
	// file); otherwise ErrPrecondition.
	IfMatch []string
	// CreateOnly refuses (ErrPrecondition) when anything is at the path
	// (If-None-Match: *).
	CreateOnly bool
}

// GlobRequest and GrepRequest are the arguments of the glob and grep
// tools.
type GlobRequest struct {
	Pattern string `json:"pattern"`
	Path    string `json:"path,omitempty"`
	Limit   int    `json:"limit,omitempty"`
}

type GrepRequest struct {
	Pattern    string `json:"pattern"`
	Literal    bool   `json:"literal,omitempty"`
	IgnoreCase bool   `json:"ignore_case,omitempty"`
	Path       string `json:"path,omitempty"`
	Glob       string `json:"glob,omitempty"`
	Context    int    `json:"context,omitempty"`
	MaxResults int    `json:"max_results,omitempty"`
}

// ToolText is the text a tool returned.
type ToolText struct {
	Text string `json:"text"`
}

// MountAction is what MountAction does.
type MountAction string

const (
	MountFlush    MountAction = "flush"
	MountRefresh  MountAction = "refresh"
	MountPrefetch MountAction = "prefetch"
)

// TransferSummary is the result of an import or export (the JSON shape of
// `forkspace import --json`).
type TransferSummary struct {
	Entries int64  `json:"entries"`
	Bytes   int64  `json:"bytes"`
	Path    string `json:"path"` // the workspace directory written or read
}

// GCRequest configures a collection: Grace 0 collects all garbage.
type GCRequest struct {
	DryRun bool          `json:"dry_run,omitempty"`
	Grace  time.Duration `json:"grace_ns"`
}

// GCResult is the JSON shape of `forkspace gc --json`.
type GCResult struct {
	DryRun       bool      `json:"dry_run"`
	GraceSeconds float64   `json:"grace_seconds"`
	Reachable    gc.Counts `json:"reachable"`
	Garbage      gc.Counts `json:"garbage"`
	Young        gc.Counts `json:"young"`
	Held         gc.Counts `json:"held"`
	Reclaimed    gc.Counts `json:"reclaimed"`
}

// DF is the JSON shape of `forkspace df --json`.
type DF struct {
	Stored     gc.Counts     `json:"stored"`
	Reachable  gc.Counts     `json:"reachable"`
	Garbage    gc.Counts     `json:"garbage"`
	Workspaces []DFWorkspace `json:"workspaces"`
}

// DFWorkspace is one workspace's line of DF.
type DFWorkspace struct {
	Name           string `json:"name"`
	ID             string `json:"id"`
	LogicalBytes   int64  `json:"logical_bytes"`
	ExclusiveBytes int64  `json:"exclusive_bytes"`
	SharedBytes    int64  `json:"shared_bytes"`
}
