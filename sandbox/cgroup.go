package sandbox

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/forkspace/forkspace/provider"
)

// Mechanisms a run's limits are enforced with (ExecResult.Mechanism).
const (
	mechCgroup2 = "cgroup v2"
	mechCgroup1 = "cgroup v1"
	mechRlimit  = "rlimit"
)

// cgroupBase is where this process may create per-run cgroups: a
// "forkspace" group under its own cgroup, per controller. v2 has one
// directory for every controller; on cgroup v1 hosts memory, pids and
// cpuacct have a directory each (cpu may be missing). A zero cgroupBase
// (mech "") means no cgroup can be used and limits fall back to rlimits.
type cgroupBase struct {
	mech   string
	memory string
	pids   string
	cpu    string // cpuacct on v1; "" when not available
	why    string // why cgroups are not used (doctor)
}

// hostCgroups is probed once per process; run groups left by a server
// that was killed are reaped then.
var hostCgroups = sync.OnceValue(func() cgroupBase {
	b := probeCgroups()
	if b.mech != "" {
		b.reapStale()
	}
	return b
})

// cgroupMount is one cgroup file system of /proc/self/mountinfo.
type cgroupMount struct {
	dir         string
	v2          bool
	controllers []string // v1: from the super options
}

// probeCgroups finds a cgroup hierarchy this process may create groups in
// with the memory and pids controllers: cgroup v2 (controllers enabled for
// the forkspace subtree) or else v1.
func probeCgroups() cgroupBase {
	mounts, err := cgroupMounts()
	if err != nil {
		return cgroupBase{why: err.Error()}
	}
	own, err := ownCgroups()
	if err != nil {
		return cgroupBase{why: err.Error()}
	}
	var why []string
	for _, m := range mounts {
		if !m.v2 {
			continue
		}
		b, err := probeV2(m.dir, own[""])
		if err == nil {
			return b
		}
		why = append(why, "cgroup v2: "+err.Error())
	}
	b, err := probeV1(mounts, own)
	if err == nil {
		return b
	}
	why = append(why, "cgroup v1: "+err.Error())
	return cgroupBase{why: strings.Join(why, "; ")}
}

// cgroupMounts lists the cgroup file systems mounted in this process's
// mount namespace.
func cgroupMounts() ([]cgroupMount, error) {
	f, err := os.Open("/proc/self/mountinfo")
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var ms []cgroupMount
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		pre, post, ok := strings.Cut(sc.Text(), " - ")
		fields, after := strings.Fields(pre), strings.Fields(post)
		if !ok || len(fields) < 5 || len(after) < 3 {
			continue
		}
		switch after[0] {
		case "cgroup2":
			ms = append(ms, cgroupMount{dir: fields[4], v2: true})
		case "cgroup":
			ms = append(ms, cgroupMount{dir: fields[4], controllers: strings.Split(after[2], ",")})
		}
	}
	return ms, sc.Err()
}

// ownCgroups maps each controller of /proc/self/cgroup to this process's
// group in its hierarchy; "" is the v2 group.
func ownCgroups() (map[string]string, error) {
	data, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		return nil, err
	}
	own := map[string]string{}
	for line := range strings.Lines(string(data)) {
		parts := strings.SplitN(strings.TrimSpace(line), ":", 3)
		if len(parts) != 3 {
			continue
		}
		for c := range strings.SplitSeq(parts[1], ",") {
			own[strings.TrimPrefix(c, "name=")] = parts[2]
		}
	}
	return own, nil
}

// probeV2 enables memory, pids and (if present) cpu for the forkspace
// subtree of this process's v2 group. It fails when the controllers are
// missing or bound to v1, or when the group holds processes itself and is
// not the root (cgroup v2 lets only leaves hold processes).
func probeV2(mount, group string) (cgroupBase, error) {
	parent := filepath.Join(mount, group)
	avail, err := os.ReadFile(filepath.Join(parent, "cgroup.controllers"))
	if err != nil {
		return cgroupBase{}, err
	}
	have := strings.Fields(string(avail))
	want := []string{"memory", "pids"}
	for _, c := range want {
		if !slices.Contains(have, c) {
			return cgroupBase{}, fmt.Errorf("controller %s not available in %s", c, parent)
		}
	}
	if slices.Contains(have, "cpu") {
		want = append(want, "cpu")
	}
	enable := "+" + strings.Join(want, " +")
	base := filepath.Join(parent, "forkspace")
	if err := os.WriteFile(filepath.Join(parent, "cgroup.subtree_control"), []byte(enable), 0); err != nil {
		return cgroupBase{}, fmt.Errorf("enable controllers in %s: %w", parent, err)
	}
	if err := os.Mkdir(base, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
		return cgroupBase{}, err
	}
	if err := os.WriteFile(filepath.Join(base, "cgroup.subtree_control"), []byte(enable), 0); err != nil {
		return cgroupBase{}, fmt.Errorf("enable controllers in %s: %w", base, err)
	}
	return cgroupBase{mech: mechCgroup2, memory: base, pids: base, cpu: base}, nil
}

// probeV1 finds the v1 memory, pids and cpuacct hierarchies and creates
// the forkspace group in each under this process's own group.
func probeV1(mounts []cgroupMount, own map[string]string) (cgroupBase, error) {
	b := cgroupBase{mech: mechCgroup1}
	for _, c := range []struct {
		name string
		dir  *string
	}{{"memory", &b.memory}, {"pids", &b.pids}, {"cpuacct", &b.cpu}} {
		for _, m := range mounts {
			if !m.v2 && slices.Contains(m.controllers, c.name) {
				*c.dir = filepath.Join(m.dir, own[c.name], "forkspace")
				break
			}
		}
		if *c.dir == "" && c.name != "cpuacct" {
			return cgroupBase{}, fmt.Errorf("controller %s not mounted", c.name)
		}
		if *c.dir == "" {
			continue
		}
		if err := os.Mkdir(*c.dir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return cgroupBase{}, err
		}
		// The group may exist already, made by another user (root): only
		// creating a group in it shows this process may.
		probe := filepath.Join(*c.dir, fmt.Sprintf("probe-%d", os.Getpid()))
		if err := os.Mkdir(probe, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return cgroupBase{}, err
		}
		os.Remove(probe)
	}
	return b, nil
}

// cgroup is the group of one run: a directory per hierarchy (one on v2).
type cgroup struct {
	base cgroupBase
	dirs []string // distinct directories, memory's first
	mem  string
	pids string
	cpu  string
}

// newRun creates the run's group and sets its limits. CPU time is not a
// cgroup limit (cpu.max bounds a rate): the run's poll checks it.
func (b cgroupBase) newRun(name string, l provider.Limits) (*cgroup, error) {
	g := b.group(name)
	for _, d := range g.dirs {
		if err := os.Mkdir(d, 0o755); err != nil {
			g.remove()
			return nil, fmt.Errorf("exec: create cgroup: %w", err)
		}
	}
	var sets [][2]string
	if b.mech == mechCgroup2 {
		sets = [][2]string{{"memory.max", itoa(l.Memory)}, {"memory.swap.max", "0"}, {"pids.max", itoa(int64(l.Processes))}}
	} else {
		sets = [][2]string{{"memory.limit_in_bytes", itoa(l.Memory)}, {"memory.memsw.limit_in_bytes", itoa(l.Memory)}}
	}
	for _, s := range sets {
		err := os.WriteFile(filepath.Join(g.mem, s[0]), []byte(s[1]), 0)
		if err != nil && !errors.Is(err, fs.ErrNotExist) { // swap accounting may be off
			g.remove()
			return nil, fmt.Errorf("exec: set cgroup %s: %w", s[0], err)
		}
	}
	if b.mech == mechCgroup1 {
		if err := os.WriteFile(filepath.Join(g.pids, "pids.max"), []byte(strconv.Itoa(l.Processes)), 0); err != nil {
			g.remove()
			return nil, fmt.Errorf("exec: set cgroup pids.max: %w", err)
		}
	}
	return g, nil
}

// group returns the (not yet created) group name under b.
func (b cgroupBase) group(name string) *cgroup {
	g := &cgroup{base: b, mem: filepath.Join(b.memory, name), pids: filepath.Join(b.pids, name)}
	if b.cpu != "" {
		g.cpu = filepath.Join(b.cpu, name)
	}
	for _, d := range []string{g.mem, g.pids, g.cpu} {
		if d != "" && !slices.Contains(g.dirs, d) {
			g.dirs = append(g.dirs, d)
		}
	}
	return g
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// join moves process pid into the group.
func (g *cgroup) join(pid int) error {
	for _, d := range g.dirs {
		if err := os.WriteFile(filepath.Join(d, "cgroup.procs"), []byte(strconv.Itoa(pid)), 0); err != nil {
			return fmt.Errorf("exec: join cgroup: %w", err)
		}
	}
	return nil
}

// cgroupStats are what a group counted.
type cgroupStats struct {
	cpu       time.Duration
	peak      int64 // memory
	pids      int   // current
	oomKills  int
	pidsLimit int // forks refused by pids.max
}

// stats reads the group's counters; missing files count zero.
func (g *cgroup) stats() cgroupStats {
	var s cgroupStats
	if g.base.mech == mechCgroup2 {
		s.cpu = time.Duration(keyed(g.cpu, "cpu.stat", "usage_usec")) * time.Microsecond
		s.peak = single(g.mem, "memory.peak")
		s.oomKills = int(keyed(g.mem, "memory.events", "oom_kill"))
	} else {
		if g.cpu != "" {
			s.cpu = time.Duration(single(g.cpu, "cpuacct.usage"))
		}
		s.peak = single(g.mem, "memory.max_usage_in_bytes")
		s.oomKills = int(keyed(g.mem, "memory.oom_control", "oom_kill"))
	}
	s.pids = int(single(g.pids, "pids.current"))
	s.pidsLimit = int(keyed(g.pids, "pids.events", "max"))
	return s
}

// single reads a file holding one number.
func single(dir, name string) int64 {
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return 0
	}
	n, _ := strconv.ParseInt(strings.TrimSpace(string(data)), 10, 64)
	return n
}

// keyed reads the number of key from a "key value" per line file.
func keyed(dir, name, key string) int64 {
	data, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		return 0
	}
	for line := range strings.Lines(string(data)) {
		if k, v, ok := strings.Cut(strings.TrimSpace(line), " "); ok && k == key {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	return 0
}

// procs lists the processes in the group.
func (g *cgroup) procs() []int {
	data, err := os.ReadFile(filepath.Join(g.pids, "cgroup.procs"))
	if err != nil {
		return nil
	}
	var pids []int
	for f := range strings.FieldsSeq(string(data)) {
		if pid, err := strconv.Atoi(f); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids
}

// commandProc reports whether pid is a live process of the command: not
// exited (a zombie or an exiting task still shows in a v1 group for a
// moment) and not bubblewrap's init of the pid namespace (pid 1 there).
func commandProc(pid int) bool {
	data, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return false
	}
	for line := range strings.Lines(string(data)) {
		k, v, _ := strings.Cut(line, ":")
		switch f := strings.Fields(v); {
		case k == "State" && len(f) > 0 && strings.ContainsAny(f[0], "ZXx"):
			return false
		case k == "NSpid" && len(f) > 0 && f[len(f)-1] == "1":
			return false
		}
	}
	return true
}

// kill kills every process of the group and returns how many of them
// were the command's (see commandProc).
// v2 has cgroup.kill; on v1 the processes are killed one by one until
// none is left (pids.max bounds how many a fork bomb keeps making).
func (g *cgroup) kill() int {
	pids := g.procs()
	n := len(slices.DeleteFunc(slices.Clone(pids), func(pid int) bool { return !commandProc(pid) }))
	if len(pids) == 0 {
		return 0
	}
	if g.base.mech == mechCgroup2 {
		if err := os.WriteFile(filepath.Join(g.pids, "cgroup.kill"), []byte("1"), 0); err == nil {
			return n
		}
	}
	for round := 0; len(pids) > 0 && round < 1000; round++ {
		for _, pid := range pids {
			syscall.Kill(pid, syscall.SIGKILL)
		}
		pids = g.procs()
	}
	return n
}

// remove kills what is left and deletes the group's directories. A group
// whose processes are still exiting is retried briefly.
func (g *cgroup) remove() {
	g.kill()
	for _, d := range g.dirs {
		for i := 0; i < 100; i++ {
			err := syscall.Rmdir(d)
			if err == nil || errors.Is(err, syscall.ENOENT) {
				break
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
}

// runGroupName names the group of one run: the server's pid first, so a
// later process can tell groups its dead predecessors left.
func runGroupName(seq uint64) string { return fmt.Sprintf("run-%d-%d", os.Getpid(), seq) }

// reapStale kills and removes the run groups under b whose server process
// is gone (killed with SIGKILL mid-run): no run outlives its server for
// longer than it takes the next one to start.
func (b cgroupBase) reapStale() {
	entries, err := os.ReadDir(b.pids)
	if err != nil {
		return
	}
	for _, e := range entries {
		var pid, seq int
		if _, err := fmt.Sscanf(e.Name(), "run-%d-%d", &pid, &seq); err != nil || !e.IsDir() {
			continue
		}
		if pid == os.Getpid() || syscall.Kill(pid, 0) == nil {
			continue
		}
		b.group(e.Name()).remove()
	}
}
