package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/zeebo/blake3"
	"golang.org/x/sys/unix"

	"github.com/forkspace/forkspace/cas"
)

// Change operations, as in provider.Change.Op.
const (
	opCreated  = "created"
	opModified = "modified"
	opDeleted  = "deleted"
)

// hostChange is one path the command changed in the work dir.
type hostChange struct {
	path string
	op   string
	st   hostStat // the host state (zero for deleted)
	// hash is set when the scan read a file to compare it.
	hash   cas.Hash
	hashed bool
	// wasDir marks a directory replaced by another type: it stands for
	// the deletion of everything it held.
	wasDir bool
}

// scanner compares the work dir with the manifest after a command. It
// walks directories in parallel; the manifest map is only read while it
// walks (entries are marked seen and re-stamped, each by one walker).
type scanner struct {
	ctx    context.Context
	dir    string
	host   *os.Root
	man    manifest
	ignore *matcher
	watch  *watcher // nil: no watches to add
	gen    uint64   // this scan's number, stored in the entries it finds

	mu      sync.Mutex
	changes []hostChange
	special []string
	walked  map[string]bool // directories read whole
	err     error
}

// scans numbers scans, so entries record which one saw them last.
var scans struct {
	sync.Mutex
	n uint64
}

// scan returns the created and modified paths and the deleted ones
// (topmost only: a deleted directory stands for its subtree), sorted by
// path, plus special files it cannot pull. Unchanged entries whose stat
// was racy are re-stamped in the manifest once their content proved
// unchanged.
func (s *scanner) scan() ([]hostChange, []string, error) {
	s.nextGen()
	if root := s.man["."]; root != nil {
		root.seen = s.gen
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	s.walk(".", &wg, sem)
	wg.Wait()
	if s.err != nil {
		return nil, nil, fmt.Errorf("scan work dir: %w", s.err)
	}
	s.unseen()
	return s.sorted()
}

// scanEvents is scan restricted to the paths a watcher reported: each is
// compared with the manifest, directories that appeared are walked whole,
// and a vanished path is deleted (topmost only).
func (s *scanner) scanEvents(ev events) ([]hostChange, []string, error) {
	s.nextGen()
	// First stat every named path and find the directories to walk whole,
	// so that no path is visited both on its own and by a walk (walks run
	// in parallel and write the entries they visit).
	type named struct {
		p    string
		h    hostStat
		gone bool
	}
	var list []named
	roots := map[string]bool{}
	dirs := map[string]bool{}
	for _, p := range slices.Sorted(maps.Keys(ev.paths)) {
		if p == "." || s.ignore.match(p) {
			continue
		}
		var st unix.Stat_t
		var err error = unix.ENOTDIR // a parent is no longer a directory: p went with it
		if underDirs(s.host, p, dirs) {
			err = unix.Lstat(s.dir+"/"+p, &st)
		}
		if errors.Is(err, unix.ENOENT) || errors.Is(err, unix.ENOTDIR) {
			if _, ok := s.man[p]; ok {
				list = append(list, named{p: p, gone: true})
			}
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("scan work dir: %w", &fs.PathError{Op: "lstat", Path: p, Err: err})
		}
		h := statFrom(&st)
		if old := s.man[p]; kindOf(h.mode) == kindDir && (ev.subtrees[p] || old == nil || old.kind != kindDir) {
			roots[p] = true
		}
		list = append(list, named{p: p, h: h})
	}
	inRoot := func(p string) bool {
		for q := path.Dir(p); q != "."; q = path.Dir(q) {
			if roots[q] {
				return true
			}
		}
		return false
	}
	var wg sync.WaitGroup
	sem := make(chan struct{}, runtime.GOMAXPROCS(0))
	deleted := map[string]bool{}
	for _, n := range list {
		switch {
		case inRoot(n.p): // its directory's walk covers it
		case n.gone:
			deleted[n.p] = true
		default:
			if err := s.visit(n.p, n.h, roots[n.p], &wg, sem); err != nil {
				wg.Wait()
				return nil, nil, fmt.Errorf("scan work dir: %w", err)
			}
		}
	}
	wg.Wait()
	if s.err != nil {
		return nil, nil, fmt.Errorf("scan work dir: %w", s.err)
	}
	for p := range deleted {
		if !deleted[path.Dir(p)] {
			s.changes = append(s.changes, hostChange{path: p, op: opDeleted})
		}
	}
	if len(s.walked) > 0 {
		s.unseen()
	}
	return s.sorted()
}

// unseen reports as deleted the manifest entries of directories the scan
// read whole that it did not find.
func (s *scanner) unseen() {
	for p, e := range s.man {
		if p != "." && e.seen != s.gen && s.walked[path.Dir(p)] {
			s.changes = append(s.changes, hostChange{path: p, op: opDeleted})
		}
	}
}

// sorted returns the collected changes sorted by path (one per path,
// without deletions beneath a directory replaced by another type) and the
// special files.
func (s *scanner) sorted() ([]hostChange, []string, error) {
	slices.SortStableFunc(s.changes, func(a, b hostChange) int { return strings.Compare(a.path, b.path) })
	s.changes = slices.CompactFunc(s.changes, func(a, b hostChange) bool { return a.path == b.path })
	replaced := map[string]bool{}
	for _, c := range s.changes {
		if c.wasDir {
			replaced[c.path] = true
		}
	}
	if len(replaced) > 0 {
		s.changes = slices.DeleteFunc(s.changes, func(c hostChange) bool {
			if c.op != opDeleted {
				return false
			}
			for p := path.Dir(c.path); p != "."; p = path.Dir(p) {
				if replaced[p] {
					return true
				}
			}
			return false
		})
	}
	slices.Sort(s.special)
	s.special = slices.Compact(s.special)
	return s.changes, s.special, nil
}

// nextGen numbers this scan.
func (s *scanner) nextGen() {
	s.walked = map[string]bool{}
	scans.Lock()
	scans.n++
	s.gen = scans.n
	scans.Unlock()
}

// underDirs reports whether every parent of p on the host is a
// directory, not a link: checked from the top, so no Lstat goes through
// a link (one that loops, or leads elsewhere in the work dir). known, if
// not nil, keeps the verdicts on parents across calls.
func underDirs(host *os.Root, p string, known map[string]bool) bool {
	for i := range len(p) {
		if p[i] != '/' {
			continue
		}
		dir := p[:i]
		ok, seen := known[dir]
		if !seen {
			fi, err := host.Lstat(dir)
			ok = err == nil && fi.IsDir()
			if known != nil {
				known[dir] = ok
			}
		}
		if !ok {
			return false
		}
	}
	return true
}

// visit compares host path p (stat h) with the manifest and, for a
// directory that is new, changed type or must be walked, walks it.
func (s *scanner) visit(p string, h hostStat, walk bool, wg *sync.WaitGroup, sem chan struct{}) error {
	old := s.man[p]
	if old != nil {
		old.seen = s.gen
	}
	k := kindOf(h.mode)
	if k == kindOther {
		s.mu.Lock()
		s.special = append(s.special, p)
		s.mu.Unlock()
		return nil
	}
	c, err := s.compare(p, h)
	if err != nil {
		return fmt.Errorf("scan %s: %w", p, err)
	}
	if c != nil {
		s.mu.Lock()
		s.changes = append(s.changes, *c)
		s.mu.Unlock()
	}
	if k == kindDir && (walk || old == nil || old.kind != kindDir) {
		s.descend(p, wg, sem)
	}
	return nil
}

// walk compares the entries of directory rel, descending into
// subdirectories on other goroutines while sem has room.
func (s *scanner) walk(rel string, wg *sync.WaitGroup, sem chan struct{}) {
	if err := s.walkDir(rel, wg, sem); err != nil {
		s.mu.Lock()
		if s.err == nil {
			s.err = err
		}
		s.mu.Unlock()
	}
}

func (s *scanner) walkDir(rel string, wg *sync.WaitGroup, sem chan struct{}) error {
	if err := s.ctx.Err(); err != nil {
		return err
	}
	abs := s.dir
	if rel != "." {
		abs += "/" + rel
	}
	fd, err := unix.Open(abs, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return &fs.PathError{Op: "open", Path: rel, Err: err}
	}
	d := os.NewFile(uintptr(fd), abs)
	defer d.Close()
	if s.watch != nil {
		s.watch.add(rel)
	}
	s.mu.Lock()
	s.walked[rel] = true
	s.mu.Unlock()
	names, err := d.Readdirnames(-1)
	if err != nil {
		return &fs.PathError{Op: "readdir", Path: rel, Err: err}
	}
	for _, name := range names {
		p := name
		if rel != "." {
			p = rel + "/" + name
		}
		if s.ignore.self(p) {
			continue
		}
		var st unix.Stat_t
		if err := unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return &fs.PathError{Op: "lstat", Path: p, Err: err}
		}
		if err := s.visit(p, statFrom(&st), true, wg, sem); err != nil {
			return err
		}
	}
	return nil
}

// descend walks directory p on another goroutine while sem has room, else
// on this one.
func (s *scanner) descend(p string, wg *sync.WaitGroup, sem chan struct{}) {
	select {
	case sem <- struct{}{}:
		wg.Add(1)
		go func() {
			defer func() { <-sem; wg.Done() }()
			s.walk(p, wg, sem)
		}()
	default:
		s.walk(p, wg, sem)
	}
}

// compare returns the change at rel, or nil when the host state matches
// the manifest.
func (s *scanner) compare(rel string, h hostStat) (*hostChange, error) {
	old := s.man[rel]
	switch {
	case old == nil:
		return &hostChange{path: rel, op: opCreated, st: h}, nil
	case old.kind != kindOf(h.mode):
		return &hostChange{path: rel, op: opModified, st: h, wasDir: old.kind == kindDir}, nil
	case old.sameHost(h):
		return nil, nil
	}
	c := &hostChange{path: rel, op: opModified, st: h}
	same := h.mode&permBits == old.perm
	switch old.kind {
	case kindFile:
		sum, err := hashFile(s.host, rel)
		if err != nil {
			return nil, err
		}
		c.hash, c.hashed = sum, true
		same = same && sum == old.hash && h.mtime == old.mtime
	case kindSymlink:
		target, err := s.host.Readlink(rel)
		if err != nil {
			return nil, err
		}
		same = target == old.target
	}
	if !same {
		return c, nil
	}
	old.setHost(h, time.Now())
	return nil, nil
}

// hashFile returns the BLAKE3 hash of host file p, never following a
// final symbolic link.
func hashFile(host *os.Root, p string) (cas.Hash, error) {
	f, err := host.OpenFile(p, os.O_RDONLY|noFollow, 0)
	if err != nil {
		return cas.Hash{}, err
	}
	defer f.Close()
	h := blake3.New()
	if _, err := io.Copy(h, f); err != nil {
		return cas.Hash{}, err
	}
	var sum cas.Hash
	copy(sum[:], h.Sum(nil))
	return sum, nil
}

// noFollow makes opening a symbolic link fail instead of following it.
const noFollow = syscall.O_NOFOLLOW
