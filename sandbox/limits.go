package sandbox

import (
	"cmp"
	"fmt"
	"io/fs"
	"time"

	"golang.org/x/sys/unix"

	"github.com/forkspace/forkspace/provider"
)

// DefaultLimits are the limits of a run when Options.Limits leaves a
// field zero.
var DefaultLimits = provider.Limits{
	CPUTime:   10 * time.Minute,
	Memory:    2 << 30,
	Processes: 1024,
	OpenFiles: 4096,
	Disk:      4 << 30,
}

// DefaultMaxTimeout caps ExecRequest.Timeout when Options.MaxTimeout is
// zero.
const DefaultMaxTimeout = time.Hour

// orDefault fills the zero fields of l from def.
func orDefault(l, def provider.Limits) provider.Limits {
	return provider.Limits{
		CPUTime:   cmpOr(l.CPUTime, def.CPUTime),
		Memory:    cmpOr(l.Memory, def.Memory),
		Processes: cmpOr(l.Processes, def.Processes),
		OpenFiles: cmpOr(l.OpenFiles, def.OpenFiles),
		Disk:      cmpOr(l.Disk, def.Disk),
	}
}

// effective returns the limits of a request: its own values, lowered to
// max, and def where it sets none. Negative values are fs.ErrInvalid.
func effective(req, def, max provider.Limits) (provider.Limits, error) {
	if req.CPUTime < 0 || req.Memory < 0 || req.Processes < 0 || req.OpenFiles < 0 || req.Disk < 0 {
		return provider.Limits{}, fmt.Errorf("exec: %w: negative limit", fs.ErrInvalid)
	}
	return provider.Limits{
		CPUTime:   capped1(req.CPUTime, def.CPUTime, max.CPUTime),
		Memory:    capped1(req.Memory, def.Memory, max.Memory),
		Processes: capped1(req.Processes, def.Processes, max.Processes),
		OpenFiles: capped1(req.OpenFiles, def.OpenFiles, max.OpenFiles),
		Disk:      capped1(req.Disk, def.Disk, max.Disk),
	}, nil
}

// capped1 is one field of effective.
func capped1[T cmp.Ordered](req, def, max T) T {
	var zero T
	if req == zero {
		return min(def, max)
	}
	return min(req, max)
}

// rlimits are the per-process limits set on every run: CPU seconds of one
// process (SIGXCPU at the limit, SIGKILL a second later), open files, and
// the size of one file (one byte past the disk limit: a single file can
// cross it, never run far past it). Without cgroups the address space and
// the process count are bounded per process too (fallback): RLIMIT_NPROC
// counts the processes of the user, and is not enforced for root. Zero
// limits are left unset.
func rlimits(l provider.Limits, fallback bool) map[int]unix.Rlimit {
	cpu := uint64((l.CPUTime + time.Second - 1) / time.Second)
	fsize := uint64(l.Disk) + 1
	if l.Disk == 0 {
		fsize = 0
	}
	r := map[int]unix.Rlimit{
		unix.RLIMIT_CPU:    {Cur: cpu, Max: cpu + min(cpu, 1)},
		unix.RLIMIT_NOFILE: same(uint64(l.OpenFiles)),
		unix.RLIMIT_FSIZE:  same(fsize),
		unix.RLIMIT_CORE:   same(0),
	}
	if fallback {
		r[unix.RLIMIT_AS] = same(uint64(l.Memory))
		r[unix.RLIMIT_NPROC] = same(uint64(l.Processes))
	}
	for res, lim := range r {
		if lim.Max == 0 && res != unix.RLIMIT_CORE {
			delete(r, res) // unset
		}
	}
	return r
}

func same(v uint64) unix.Rlimit { return unix.Rlimit{Cur: v, Max: v} }

// setRlimits applies r to process pid (which has not yet started the
// command: limits are inherited).
func setRlimits(pid int, r map[int]unix.Rlimit) error {
	for res, lim := range r {
		if err := unix.Prlimit(pid, res, &lim, nil); err != nil {
			return fmt.Errorf("exec: set resource limit %d: %w", res, err)
		}
	}
	return nil
}

// size formats a byte count for people ("512 MiB").
func size(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 4; m /= unit {
		div *= unit
		exp++
	}
	v := float64(n) / float64(div)
	suffix := "KMGTP"[exp : exp+1]
	if v == float64(int64(v)) {
		return fmt.Sprintf("%d %siB", int64(v), suffix)
	}
	return fmt.Sprintf("%.1f %siB", v, suffix)
}
