package sandbox

import (
	"io/fs"
	"path/filepath"
	"time"
)

// meter measures how much a run grew what it writes to while it runs
// (growth, polled; due is false when it did not measure) and once more
// at the end (final).
type meter interface {
	growth(now time.Time) (n int64, due bool)
	final() int64
}

// diskMeter measures how much a run grew the work dir while it runs: the
// sum of the sizes of its regular files against the sum the manifest
// records before the run. Paths matching Options.Ignore are left out of
// both (they are not pulled back; RLIMIT_FSIZE bounds each of their
// files). It walks the whole work dir, so it polls at an
// interval of at least ten times a walk's duration: the meter costs at
// most a tenth of a core, and a run shorter than the first interval is
// never walked. RLIMIT_FSIZE bounds any single file in between.
type diskMeter struct {
	dir    string
	ignore *matcher
	base   int64 // the sum before the run
	next   time.Time
	// every is the current polling interval.
	every time.Duration
}

// minDiskPoll is the shortest interval between two walks.
const minDiskPoll = 250 * time.Millisecond

// newDiskMeter starts measuring the work dir dir, which man describes.
func newDiskMeter(dir string, man manifest, ignore *matcher) *diskMeter {
	d := &diskMeter{dir: dir, ignore: ignore, every: minDiskPoll}
	for _, e := range man {
		if e.kind == kindFile {
			d.base += e.size
		}
	}
	d.next = time.Now().Add(d.every)
	return d
}

// growth returns the bytes the work dir grew by, walking it if its
// interval has passed (due false otherwise).
func (d *diskMeter) growth(now time.Time) (n int64, due bool) {
	if now.Before(d.next) {
		return 0, false
	}
	start := time.Now()
	total := d.walk()
	d.every = max(minDiskPoll, 10*time.Since(start))
	d.next = time.Now().Add(d.every)
	return total - d.base, true
}

// final measures the growth once more, at the end of the run.
func (d *diskMeter) final() int64 { return d.walk() - d.base }

// walk sums the sizes of the work dir's regular files (never following
// symbolic links). Paths that vanish while it walks count zero.
func (d *diskMeter) walk() int64 {
	var total int64
	filepath.WalkDir(d.dir, func(p string, e fs.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		if rel, _ := filepath.Rel(d.dir, p); rel != "." && d.ignore.self(filepath.ToSlash(rel)) {
			if e.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if !e.Type().IsRegular() {
			return nil
		}
		if fi, err := e.Info(); err == nil {
			total += fi.Size()
		}
		return nil
	})
	return total
}

// growth is how many bytes the changes a scan found added to the work
// dir: each changed file's growth over the manifest's record of it (new
// files whole; shrunk and deleted files give nothing back). The polls
// while the run goes measure the net growth of the whole work dir, which
// is never more.
func growth(changes []hostChange, man manifest) int64 {
	var n int64
	for _, c := range changes {
		if !c.st.mode.IsRegular() {
			continue
		}
		old := int64(0)
		if e := man[c.path]; e != nil && e.kind == kindFile {
			old = e.size
		}
		n += max(0, c.st.size-old)
	}
	return n
}
