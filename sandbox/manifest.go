package sandbox

import (
	"io/fs"
	"strings"
	"syscall"
	"time"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/vfs"
)

// kind is the type of a manifest entry.
type kind uint8

const (
	kindOther kind = iota // devices, pipes, sockets: never synced
	kindFile
	kindDir
	kindSymlink
)

func kindOf(m fs.FileMode) kind {
	switch m.Type() {
	case 0:
		return kindFile
	case fs.ModeDir:
		return kindDir
	case fs.ModeSymlink:
		return kindSymlink
	}
	return kindOther
}

func (k kind) String() string {
	return [...]string{"special file", "file", "directory", "symlink"}[k]
}

// racyWindow is how close to the moment it was recorded a host ctime must
// be for the entry to count as racy: file system timestamps advance in
// clock ticks, so a file rewritten within the same tick as its stat keeps
// an identical stat. Racy entries are compared by content hash.
const racyWindow = 50 * time.Millisecond

// entry is what the manifest knows of one path of the work dir: the host
// state last written or seen (the workspace state it mirrors, with
// permission bits as materialized), the host identity that tells cheaply
// whether the host file changed since, and the workspace identity of the
// state it mirrors (inode and ctime, which every workspace mutation
// bumps) that tells whether the workspace changed since.
type entry struct {
	kind   kind
	perm   fs.FileMode
	size   int64
	mtime  int64
	hash   cas.Hash // files
	target string   // symlinks

	hostIno   uint64
	hostCtime int64
	racy      bool

	wsIno   uint64
	wsCtime int64
}

// manifest maps work-dir paths (io/fs style, "." the root) to entries.
type manifest map[string]*entry

// drop removes p and everything beneath it.
func (m manifest) drop(p string) {
	delete(m, p)
	if p == "." {
		clear(m)
		return
	}
	prefix := p + "/"
	for q := range m {
		if strings.HasPrefix(q, prefix) {
			delete(m, q)
		}
	}
}

// permBits are the mode bits synced in both directions.
const permBits = fs.ModePerm | fs.ModeSetuid | fs.ModeSetgid | fs.ModeSticky

// hostPerm is the permission a workspace mode gets on the host: setuid and
// setgid are never materialized (the work dir is owned by whoever runs
// forkspace, possibly root).
func hostPerm(m fs.FileMode) fs.FileMode { return m & (fs.ModePerm | fs.ModeSticky) }

// setHost records the host state fi of the entry, observed at now.
func (e *entry) setHost(fi fs.FileInfo, now time.Time) {
	e.kind, e.perm, e.size, e.mtime = kindOf(fi.Mode()), fi.Mode()&permBits, fi.Size(), fi.ModTime().UnixNano()
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		e.hostIno, e.hostCtime = st.Ino, st.Ctim.Nano()
	}
	e.racy = e.hostCtime > now.Add(-racyWindow).UnixNano()
}

// sameHost reports whether fi shows the host path unchanged since e was
// recorded, without reading it (never for racy entries).
func (e *entry) sameHost(fi fs.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && !e.racy && kindOf(fi.Mode()) == e.kind && fi.Mode()&permBits == e.perm &&
		fi.Size() == e.size && fi.ModTime().UnixNano() == e.mtime &&
		st.Ino == e.hostIno && st.Ctim.Nano() == e.hostCtime
}

// setWorkspace records the workspace identity of the state e mirrors.
func (e *entry) setWorkspace(fi fs.FileInfo) {
	if a, ok := fi.Sys().(*vfs.Attr); ok {
		e.wsIno, e.wsCtime = a.Ino, a.Ctime.UnixNano()
	}
}

// sameWorkspace reports whether fi is the workspace state e mirrors.
func (e *entry) sameWorkspace(fi fs.FileInfo) bool {
	a, ok := fi.Sys().(*vfs.Attr)
	return ok && kindOf(fi.Mode()) == e.kind && a.Ino == e.wsIno && a.Ctime.UnixNano() == e.wsCtime
}
