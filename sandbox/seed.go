package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// seed fills the empty work dir of a fork from the work dir of its parent,
// when that one is materialized and idle (its manifest known, no run in it
// here or in another process): every entry the parent's manifest records
// is recreated from the parent's host copy — files by reflink (FICLONE)
// where the file system shares extents, else by an in-kernel copy
// (copy_file_range), never by a hard link, so a command in the fork cannot
// reach the parent's bytes — and the manifest entries are taken over with
// the new host identities. The work dir then mirrors the parent's state,
// and the sync that follows writes only what Diff reports between that
// state and the fork's. The parent's manifest is this process's, or the
// one a process left in the parent's state directory when it closed its
// Shell (saved.go), valid while no run changed the dir since (the token).
// It reports false when there is nothing to seed from; the caller then
// materializes everything.
func (s *Shell) seed(ctx context.Context, host *os.Root, stats *Stats) (bool, error) {
	parent := s.ws.ParentID()
	if parent == "" || !emptyDir(host) {
		return false, nil
	}
	var from *saved
	pst, pdir := s.idleState(parent)
	if pst != nil {
		defer pst.mu.Unlock()
		from = &saved{token: pst.token, synced: pst.synced, pending: pst.pending, man: pst.man}
	} else if filepath.Dir(s.dir) == defaultBase() {
		// A parent with a default work dir, closed by another process.
		pdir = filepath.Join(defaultBase(), parent)
	} else {
		return false, nil
	}
	lf, err := lockFile(pdir+".state", false)
	if err != nil {
		return false, nil // busy in another process, or swept
	}
	defer lf.Close()
	if from == nil {
		if from, err = loadSaved(pdir + ".state"); err != nil {
			return false, nil
		}
	}
	if token, err := os.ReadFile(filepath.Join(pdir+".state", "token")); err != nil || string(token) != from.token {
		return false, nil // another process used it since
	}
	src, err := os.OpenRoot(pdir)
	if err != nil {
		return false, nil
	}
	defer src.Close()
	// Directories and links first, in order, then the files in parallel:
	// creating files is most of the cost.
	st := s.st
	var files []string
	for _, p := range slices.Sorted(maps.Keys(from.man)) {
		pe := from.man[p]
		if pe.kind == kindFile {
			files = append(files, p)
			continue
		}
		e, err := seedEntry(src, host, p, pe, st.owner)
		if err != nil {
			return false, fmt.Errorf("seed %s from the parent's work dir: %w", p, err)
		}
		st.seeded(p, e, stats)
	}
	seeded := make([]seededFile, len(files))
	errs := make([]error, len(files))
	var wg sync.WaitGroup
	sem := make(chan struct{}, seedWorkers)
	for i, p := range files {
		if err := ctx.Err(); err != nil {
			errs[i] = err
			break
		}
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			seeded[i], errs[i] = seedFile(src, host, p, from.man[p], st.owner)
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return false, fmt.Errorf("seed from the parent's work dir: %w", err)
	}
	for i, sf := range seeded {
		st.seeded(files[i], sf.entry, stats)
		if sf.cloned {
			stats.Cloned++
		}
		stats.Copied += sf.copied
	}
	for p, sub := range from.pending {
		mark(st.pending, p, sub)
	}
	st.synced = from.synced
	return true, nil
}

// seedWorkers is how many files seed creates at once.
const seedWorkers = 8

// seeded records the fork's entry e for p; nil means the parent's host
// copy was not what its manifest says, and the sync writes p from the
// workspace.
func (st *dirState) seeded(p string, e *entry, stats *Stats) {
	if e == nil {
		mark(st.pending, p, true)
		return
	}
	st.man[p] = e
	stats.Seeded++
}

// idleState returns, locked, a state of this process that mirrors
// workspace id in a work dir no run of this process is using, with that
// dir; nil if there is none.
func (s *Shell) idleState(id string) (found *dirState, dir string) {
	states.Range(func(k, v any) bool {
		st := v.(*dirState)
		if st == s.st || !st.mu.TryLock() {
			return true
		}
		if st.wsID == id && st.man != nil {
			found, dir = st, k.(string)
			return false
		}
		st.mu.Unlock()
		return true
	})
	return found, dir
}

// emptyDir reports whether the root directory of host has no entry.
func emptyDir(host *os.Root) bool {
	d, err := host.Open(".")
	if err != nil {
		return false
	}
	defer d.Close()
	names, err := d.Readdirnames(1)
	return len(names) == 0 && errors.Is(err, io.EOF)
}

// seedEntry recreates the parent's directory or symbolic link p
// (recorded as pe) in host, owned by owner (0: as created), and returns
// the fork's manifest entry for it, or nil when the parent's host copy is
// not what pe records.
func seedEntry(src, host *os.Root, p string, pe *entry, owner int) (*entry, error) {
	perm := hostPerm(pe.perm)
	switch pe.kind {
	case kindDir:
		if p != "." {
			if err := host.Mkdir(p, perm); err != nil {
				return nil, err
			}
		}
		if err := host.Chmod(p, perm); err != nil { // past the umask
			return nil, err
		}
	case kindSymlink:
		if target, err := src.Readlink(p); err != nil || target != pe.target {
			return nil, nil
		}
		if err := host.Symlink(pe.target, p); err != nil {
			return nil, err
		}
	default:
		return nil, nil
	}
	hfi, err := ownAt(host, p, owner)
	if err != nil {
		return nil, err
	}
	return takeOver(pe, statOf(hfi)), nil
}

// takeOver is the parent's entry pe for the fork's host copy, of stat h.
func takeOver(pe *entry, h hostStat) *entry {
	e := *pe
	e.seen = 0
	e.setHost(h, time.Now())
	return &e
}

// seededFile is what seedFile did.
type seededFile struct {
	entry  *entry // nil: not seeded
	cloned bool   // by reflink
	copied int64  // bytes copied
}

// seedFile clones (or copies) the parent's file p, recorded as pe, into
// host, with its permission bits and mtime, owned by owner (0: as
// created). It seeds nothing when the parent's file is not the one pe
// recorded.
func seedFile(src, host *os.Root, p string, pe *entry, owner int) (seededFile, error) {
	in, err := src.OpenFile(p, os.O_RDONLY|noFollow, 0)
	if err != nil {
		return seededFile{}, nil // not seeded: the sync writes it
	}
	defer in.Close()
	var st unix.Stat_t
	if err := unix.Fstat(int(in.Fd()), &st); err != nil || !pe.sameStat(statFrom(&st)) {
		return seededFile{}, nil
	}
	perm := hostPerm(pe.perm)
	out, err := host.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, perm)
	if err != nil {
		return seededFile{}, fmt.Errorf("%s: %w", p, err)
	}
	var sf seededFile
	if unix.IoctlFileClone(int(out.Fd()), int(in.Fd())) == nil {
		sf.cloned = true
	} else if _, err = io.Copy(out, in); err == nil { // copy_file_range
		sf.copied = pe.size
	}
	mtime := time.Unix(0, pe.mtime)
	ts := []unix.Timespec{unix.NsecToTimespec(mtime.UnixNano()), unix.NsecToTimespec(mtime.UnixNano())}
	if err == nil && owner != 0 {
		err = out.Chown(owner, owner)
	}
	if err == nil {
		err = out.Chmod(perm) // past the umask (and a chown's clearing)
	}
	if err == nil {
		err = unix.UtimesNanoAt(int(out.Fd()), "", ts, unix.AT_EMPTY_PATH)
	}
	if err == nil {
		err = unix.Fstat(int(out.Fd()), &st)
	}
	if err = errors.Join(err, out.Close()); err != nil {
		return seededFile{}, fmt.Errorf("%s: %w", p, err)
	}
	sf.entry = takeOver(pe, statFrom(&st))
	return sf, nil
}
