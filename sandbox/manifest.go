package sandbox

import (
	"io/fs"
	"strings"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

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

	// seen is the number of the last scan that found the path.
	seen uint64
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

// hostStat is the part of a host lstat the manifest keeps.
type hostStat struct {
	mode               fs.FileMode
	size, mtime, ctime int64
	ino                uint64
}

// statOf converts an os.Lstat result.
func statOf(fi fs.FileInfo) hostStat {
	h := hostStat{mode: fi.Mode(), size: fi.Size(), mtime: fi.ModTime().UnixNano()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		h.ino, h.ctime = st.Ino, st.Ctim.Nano()
	}
	return h
}

// statFrom converts a raw stat.
func statFrom(st *unix.Stat_t) hostStat {
	m := fs.FileMode(st.Mode & 0o777)
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG:
	case unix.S_IFDIR:
		m |= fs.ModeDir
	case unix.S_IFLNK:
		m |= fs.ModeSymlink
	default:
		m |= fs.ModeIrregular
	}
	if st.Mode&unix.S_ISUID != 0 {
		m |= fs.ModeSetuid
	}
	if st.Mode&unix.S_ISGID != 0 {
		m |= fs.ModeSetgid
	}
	if st.Mode&unix.S_ISVTX != 0 {
		m |= fs.ModeSticky
	}
	return hostStat{mode: m, size: st.Size, mtime: st.Mtim.Nano(), ctime: st.Ctim.Nano(), ino: st.Ino}
}

// setHost records the host state h of the entry, observed at now.
func (e *entry) setHost(h hostStat, now time.Time) {
	e.kind, e.perm, e.size, e.mtime = kindOf(h.mode), h.mode&permBits, h.size, h.mtime
	e.hostIno, e.hostCtime = h.ino, h.ctime
	e.racy = e.hostCtime > now.Add(-racyWindow).UnixNano()
}

// sameHost reports whether h shows the host path unchanged since e was
// recorded, without reading it (never for racy entries).
func (e *entry) sameHost(h hostStat) bool { return !e.racy && e.sameStat(h) }

// sameStat reports whether h is the stat e recorded, racy or not.
func (e *entry) sameStat(h hostStat) bool {
	return kindOf(h.mode) == e.kind && h.mode&permBits == e.perm && h.size == e.size &&
		h.mtime == e.mtime && h.ino == e.hostIno && h.ctime == e.hostCtime
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
