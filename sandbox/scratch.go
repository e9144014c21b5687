package sandbox

import (
	"fmt"
	"io/fs"
	"strconv"
	"strings"
)

// ScratchHome is the command's HOME: a directory of the sandbox's /tmp,
// which is a tmpfs of its own per run. Caches and logs tools write under
// HOME (npm, go, pip) and temporary files stay out of the workspace, its
// checkpoints and diffs; they do not persist between runs.
const ScratchHome = "/tmp/home"

// scratchArgs mount the run's /tmp: a tmpfs bounded by the smaller of the
// memory and disk limits (its pages are memory, charged to the run's
// cgroup), holding ScratchHome.
func (r *run) scratchArgs() []string {
	size := min(r.limits.Memory, r.limits.Disk)
	if size <= 0 {
		size = min(DefaultLimits.Memory, DefaultLimits.Disk)
	}
	return []string{"--size", strconv.FormatInt(size, 10), "--tmpfs", "/tmp",
		"--perms", "0700", "--dir", ScratchHome}
}

// checkEnv rejects a variable no environment can hold.
func checkEnv(k, v string) error {
	if k == "" || strings.ContainsAny(k, "=\x00") || strings.ContainsRune(v, 0) {
		return fmt.Errorf("exec: environment variable %q: %w", k, fs.ErrInvalid)
	}
	return nil
}
