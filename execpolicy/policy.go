package execpolicy

import (
	"cmp"
	"fmt"
	"io/fs"
	"strings"

	"github.com/forkspace/forkspace/provider"
)

// Policy is one level's policy. The zero value narrows nothing.
type Policy struct {
	// Network is nil when this level leaves the network to the others.
	Network *Network `json:"network,omitempty"`
	// Limits caps a run's limits; zero fields cap nothing.
	Limits provider.Limits `json:"limits,omitzero"`
}

// IsZero reports whether p narrows nothing.
func (p Policy) IsZero() bool { return p.Network == nil && p.Limits == provider.Limits{} }

// Check refuses negative limits (fs.ErrInvalid).
func (p Policy) Check() error {
	l := p.Limits
	if l.CPUTime < 0 || l.Memory < 0 || l.Processes < 0 || l.OpenFiles < 0 || l.Disk < 0 {
		return fmt.Errorf("exec policy: %w: negative limit", fs.ErrInvalid)
	}
	return nil
}

// Narrow returns the narrowest of p and q: the network both allow, and
// the smaller cap of each limit.
func (p Policy) Narrow(q Policy) Policy {
	out := Policy{Network: p.Network, Limits: provider.Limits{
		CPUTime:   minSet(p.Limits.CPUTime, q.Limits.CPUTime),
		Memory:    minSet(p.Limits.Memory, q.Limits.Memory),
		Processes: minSet(p.Limits.Processes, q.Limits.Processes),
		OpenFiles: minSet(p.Limits.OpenFiles, q.Limits.OpenFiles),
		Disk:      minSet(p.Limits.Disk, q.Limits.Disk),
	}}
	switch {
	case p.Network == nil:
		out.Network = q.Network
	case q.Network != nil:
		n := p.Network.Narrow(*q.Network)
		out.Network = &n
	}
	return out
}

// minSet is the smaller of two caps, 0 meaning none.
func minSet[T cmp.Ordered](a, b T) T {
	var zero T
	switch {
	case a == zero:
		return b
	case b == zero:
		return a
	}
	return min(a, b)
}

// Within checks that what p sets allows nothing outer does not: its
// network within outer's, and each limit it caps at most outer's cap.
// What p leaves unset outer.Narrow(p) takes from outer. A wider p is
// fs.ErrPermission, naming what is wider.
func (p Policy) Within(outer Policy) error {
	if outer.Network != nil && p.Network != nil && !p.Network.Within(*outer.Network) {
		return fmt.Errorf("%w: network %s is wider than %s", fs.ErrPermission, p.Network, outer.Network)
	}
	var wider []string
	check := func(name string, v, cap int64) {
		if cap != 0 && v > cap {
			wider = append(wider, name)
		}
	}
	check("cpu", int64(p.Limits.CPUTime), int64(outer.Limits.CPUTime))
	check("memory", p.Limits.Memory, outer.Limits.Memory)
	check("processes", int64(p.Limits.Processes), int64(outer.Limits.Processes))
	check("open files", int64(p.Limits.OpenFiles), int64(outer.Limits.OpenFiles))
	check("disk", p.Limits.Disk, outer.Limits.Disk)
	if len(wider) > 0 {
		return fmt.Errorf("%w: limits %s are wider than their caps %s", fs.ErrPermission, strings.Join(wider, ", "), outer)
	}
	return nil
}

// String describes p in one line ("network full, memory ≤ 536870912").
func (p Policy) String() string {
	var parts []string
	if p.Network != nil {
		parts = append(parts, "network "+p.Network.String())
	}
	l := p.Limits
	add := func(name string, v int64, s string) {
		if v != 0 {
			parts = append(parts, name+" ≤ "+s)
		}
	}
	add("cpu", int64(l.CPUTime), l.CPUTime.String())
	add("memory", l.Memory, fmt.Sprint(l.Memory))
	add("processes", int64(l.Processes), fmt.Sprint(l.Processes))
	add("open files", int64(l.OpenFiles), fmt.Sprint(l.OpenFiles))
	add("disk", l.Disk, fmt.Sprint(l.Disk))
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ", ")
}
