package sandbox

import (
	"context"
	"fmt"
	"io"
	"io/fs"
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
	gen    uint64 // this scan's number, stored in the entries it finds

	mu      sync.Mutex
	changes []hostChange
	special []string
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
	scans.Lock()
	scans.n++
	s.gen = scans.n
	scans.Unlock()
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
	for p, e := range s.man {
		if e.seen == s.gen || p == "." {
			continue
		}
		if parent := s.man[path.Dir(p)]; parent != nil && parent.seen == s.gen && parent.kind == kindDir {
			s.changes = append(s.changes, hostChange{path: p, op: opDeleted})
		}
	}
	slices.SortFunc(s.changes, func(a, b hostChange) int { return strings.Compare(a.path, b.path) })
	slices.Sort(s.special)
	return s.changes, s.special, nil
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
	names, err := d.Readdirnames(-1)
	if err != nil {
		return &fs.PathError{Op: "readdir", Path: rel, Err: err}
	}
	var changes []hostChange
	var special []string
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
		h := statFrom(&st)
		if old := s.man[p]; old != nil {
			old.seen = s.gen
		}
		k := kindOf(h.mode)
		if k == kindOther {
			special = append(special, p)
			continue
		}
		c, err := s.compare(p, h)
		if err != nil {
			return fmt.Errorf("scan %s: %w", p, err)
		}
		if c != nil {
			changes = append(changes, *c)
		}
		if k == kindDir {
			select {
			case sem <- struct{}{}:
				wg.Add(1)
				go func() {
					defer func() { <-sem; wg.Done() }()
					s.walk(p, wg, sem)
				}()
			default:
				if err := s.walkDir(p, wg, sem); err != nil {
					return err
				}
			}
		}
	}
	if len(changes)+len(special) > 0 {
		s.mu.Lock()
		s.changes = append(s.changes, changes...)
		s.special = append(s.special, special...)
		s.mu.Unlock()
	}
	return nil
}

// compare returns the change at rel, or nil when the host state matches
// the manifest.
func (s *scanner) compare(rel string, h hostStat) (*hostChange, error) {
	old := s.man[rel]
	switch {
	case old == nil:
		return &hostChange{path: rel, op: opCreated, st: h}, nil
	case old.kind != kindOf(h.mode):
		return &hostChange{path: rel, op: opModified, st: h}, nil
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
