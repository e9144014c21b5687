package sandbox

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"time"

	"github.com/zeebo/blake3"

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
	fi   fs.FileInfo // the host state (nil for deleted)
	// hash is set when the scan read a file to compare it.
	hash   cas.Hash
	hashed bool
}

// scanner compares the work dir with the manifest after a command.
type scanner struct {
	ctx    context.Context
	dir    string
	host   *os.Root
	man    manifest
	ignore *matcher
}

// scan returns the created and modified paths (parents before children)
// and the deleted ones (topmost only: a deleted directory stands for its
// subtree), plus special files it cannot pull. Unchanged entries whose
// stat was racy are re-stamped in the manifest once their content proved
// unchanged.
func (s *scanner) scan() (changes []hostChange, special []string, err error) {
	seen := make(map[string]bool, len(s.man))
	err = filepath.WalkDir(s.dir, func(abs string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if err := s.ctx.Err(); err != nil {
			return err
		}
		rel, err := filepath.Rel(s.dir, abs)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if rel != "." && s.ignore.self(rel) {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		seen[rel] = true
		fi, err := d.Info()
		if err != nil {
			return err
		}
		if kindOf(fi.Mode()) == kindOther {
			special = append(special, rel)
			return nil
		}
		c, err := s.compare(rel, fi)
		if err != nil {
			return fmt.Errorf("scan %s: %w", rel, err)
		}
		if c != nil {
			changes = append(changes, *c)
		}
		return nil
	})
	if err != nil {
		return nil, nil, fmt.Errorf("scan work dir: %w", err)
	}
	for p := range s.man {
		if !seen[p] && seen[parentOf(p)] && !s.ignore.match(p) {
			changes = append(changes, hostChange{path: p, op: opDeleted})
		}
	}
	return changes, special, nil
}

// compare returns the change at rel, or nil when the host state matches
// the manifest.
func (s *scanner) compare(rel string, fi fs.FileInfo) (*hostChange, error) {
	old := s.man[rel]
	switch {
	case old == nil:
		return &hostChange{path: rel, op: opCreated, fi: fi}, nil
	case old.kind != kindOf(fi.Mode()):
		return &hostChange{path: rel, op: opModified, fi: fi}, nil
	case old.sameHost(fi):
		return nil, nil
	}
	c := &hostChange{path: rel, op: opModified, fi: fi}
	same := fi.Mode()&permBits == old.perm
	switch old.kind {
	case kindFile:
		h, err := hashFile(s.host, rel)
		if err != nil {
			return nil, err
		}
		c.hash, c.hashed = h, true
		same = same && h == old.hash && fi.ModTime().UnixNano() == old.mtime
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
	old.setHost(fi, time.Now())
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

func parentOf(p string) string {
	if d := filepath.Dir(p); d != "" {
		return filepath.ToSlash(d)
	}
	return "."
}

// noFollow makes opening a symbolic link fail instead of following it.
const noFollow = syscall.O_NOFOLLOW
