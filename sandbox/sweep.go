package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
)

// DefaultIdle is how long a work dir under the default base may go
// unused before a sweep removes it (Options.Idle, SweepOptions.Idle).
const DefaultIdle = 24 * time.Hour

// sweepEvery is how often Exec sweeps the default base, at most.
const sweepEvery = time.Hour

// errSwept: the lock file was removed (by a sweep) while it was being
// taken.
var errSwept = errors.New("work dir removed while locking it")

// lockFile takes the flock of the lock file in stateDir, waiting for its
// holder when wait is set (else failing with unix.EWOULDBLOCK), and marks
// the work dir as used now (the file's mtime, which sweeps read). It fails
// with errSwept when a sweep removed the file meanwhile.
func lockFile(stateDir string, wait bool) (*os.File, error) {
	name := filepath.Join(stateDir, "lock")
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o600)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, errSwept
	}
	if err != nil {
		return nil, err
	}
	how := unix.LOCK_EX
	if !wait {
		how |= unix.LOCK_NB
	}
	if err := unix.Flock(int(f.Fd()), how); err != nil {
		f.Close()
		return nil, err
	}
	held, err1 := f.Stat()
	now, err2 := os.Stat(name)
	if err1 != nil || err2 != nil || !os.SameFile(held, now) {
		f.Close()
		return nil, errSwept
	}
	t := time.Now()
	if err := os.Chtimes(name, t, t); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// lockFileContext is lockFile that waits for the holder until ctx ends
// (polling: a flock cannot be waited for with a context).
func lockFileContext(ctx context.Context, stateDir string) (*os.File, error) {
	delay := time.Millisecond
	for {
		f, err := lockFile(stateDir, false)
		if !errors.Is(err, unix.EWOULDBLOCK) {
			return f, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(delay):
		}
		delay = min(2*delay, 100*time.Millisecond)
	}
}

// SweepOptions configure Sweep.
type SweepOptions struct {
	// Dir holds the work dirs (default: the default base,
	// os.TempDir()/forkspace-sandbox-<uid>). Only entries with a state
	// directory beside them (NAME.state holding a lock file) are work dirs;
	// nothing else in Dir is touched.
	Dir string
	// Idle removes work dirs unused for longer (no run started in them);
	// zero means DefaultIdle, negative never.
	Idle time.Duration
	// Live, when set, reports whether the workspace with the given ID
	// still exists; the work dirs of the others are removed, idle or not.
	Live func(id string) bool
}

// Sweep removes work dirs (with their state directories) that are idle
// longer than opts.Idle or whose workspace is gone, and returns the
// workspace IDs (directory names) it removed. A work dir in use (a run
// holds its lock, in any process) is left alone; a run that starts later
// in a removed one rematerializes it.
func Sweep(ctx context.Context, opts SweepOptions) ([]string, error) {
	dir := cmpOr(opts.Dir, defaultBase())
	idle := cmpOr(opts.Idle, DefaultIdle)
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("sweep work dirs: %w", err)
	}
	var removed []string
	var errs []error
	for _, e := range ents {
		id, ok := strings.CutSuffix(e.Name(), ".state")
		if !ok || !e.IsDir() {
			continue
		}
		if err := ctx.Err(); err != nil {
			return removed, err
		}
		gone := opts.Live != nil && !opts.Live(id)
		ok, err := sweepOne(filepath.Join(dir, id), idle, gone)
		if err != nil {
			errs = append(errs, err)
		}
		if ok {
			removed = append(removed, id)
		}
	}
	if err := errors.Join(errs...); err != nil {
		return removed, fmt.Errorf("sweep work dirs: %w", err)
	}
	return removed, nil
}

// RemoveWorkDir removes the default work dir of workspace id and its state
// directory (for a deleted workspace), waiting for a run in it to finish.
// A work dir that does not exist is no error.
func RemoveWorkDir(ctx context.Context, id string) error {
	if id == "" || strings.ContainsAny(id, `/\`) || id == "." || id == ".." {
		return fmt.Errorf("remove work dir: %w: workspace ID %q", fs.ErrInvalid, id)
	}
	work := filepath.Join(defaultBase(), id)
	f, err := lockFile(work+".state", true)
	if errors.Is(err, errSwept) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("remove work dir: %w", err)
	}
	defer f.Close()
	return removeWork(work)
}

// sweepOne removes work dir work when it is not in use and gone is set or
// it is idle longer than idle.
func sweepOne(work string, idle time.Duration, gone bool) (bool, error) {
	lock := filepath.Join(work+".state", "lock")
	fi, err := os.Lstat(lock)
	if err != nil || !fi.Mode().IsRegular() {
		return false, nil // not a work dir's state directory
	}
	if !gone && (idle < 0 || time.Since(fi.ModTime()) <= idle) {
		return false, nil
	}
	f, err := os.OpenFile(lock, os.O_RDWR|syscall.O_NOFOLLOW, 0)
	if err != nil {
		return false, nil
	}
	defer f.Close()
	if unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) != nil {
		return false, nil // a run holds it
	}
	if !gone {
		// Used between the Lstat and the lock?
		if fi, err := f.Stat(); err != nil || time.Since(fi.ModTime()) <= idle {
			return false, nil
		}
	}
	return true, removeWork(work)
}

// removeWork deletes a work dir and then its state directory (whose lock
// file the caller holds: a run waiting on it finds it removed and starts
// over).
func removeWork(work string) error {
	if err := errors.Join(unmountStale(work+".state"), os.RemoveAll(work), os.RemoveAll(work+".state")); err != nil {
		return fmt.Errorf("remove work dir: %w", err)
	}
	return nil
}

// lastSweep is when this process last swept the default base.
var lastSweep struct {
	sync.Mutex
	at time.Time
}

// sweepIdle sweeps the default base for idle work dirs, at most once every
// sweepEvery per process, when s's work dir lives there. What it cannot
// remove waits for the next sweep: a run does not fail for it.
func (s *Shell) sweepIdle(ctx context.Context) {
	if s.opts.Idle < 0 || filepath.Dir(s.dir) != defaultBase() {
		return
	}
	lastSweep.Lock()
	if time.Since(lastSweep.at) < sweepEvery {
		lastSweep.Unlock()
		return
	}
	lastSweep.at = time.Now()
	lastSweep.Unlock()
	Sweep(ctx, SweepOptions{Idle: s.opts.Idle})
}
