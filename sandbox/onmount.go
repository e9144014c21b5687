package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/forkspace/forkspace/fusefs"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/provider"
	"github.com/forkspace/forkspace/vfs"
)

// Mode is where a command's /workspace comes from (Options.Mode).
type Mode string

const (
	// ModeAuto picks per run (see Modes in the package documentation).
	ModeAuto Mode = ""
	// ModeCopy materializes the workspace into the work dir and pulls the
	// command's changes back from it.
	ModeCopy Mode = "copy"
	// ModeFUSE binds a FUSE mount of a scratch fork of the workspace.
	ModeFUSE Mode = "fuse"
)

// ParseMode parses a mode as the CLI takes it: "auto" (or ""), "copy" or
// "fuse"; anything else is fs.ErrInvalid.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(strings.TrimSpace(s)); m {
	case "auto", ModeAuto:
		return ModeAuto, nil
	case ModeCopy, ModeFUSE:
		return m, nil
	}
	return ModeAuto, fmt.Errorf("exec mode %q: %w: want auto, copy or fuse", s, fs.ErrInvalid)
}

// ErrNoFUSE is returned by Exec in ModeFUSE when a run cannot use it: no
// /dev/fuse, or a workspace with mounts. It matches
// errors.ErrUnsupported.
var ErrNoFUSE = fmt.Errorf("exec on a FUSE mount is not available: %w", errors.ErrUnsupported)

// mountDir is the FUSE mount point of a run, in the state directory.
func (s *Shell) mountDir() string { return filepath.Join(s.stateDir(), "mnt") }

// scratchFile records the name of the scratch fork of the run in flight,
// written before the fork is made, so that the next run (holding the
// work dir's lock) deletes one a crash left behind.
func (s *Shell) scratchFile() string { return filepath.Join(s.stateDir(), "scratch") }

// onMount decides whether a run uses ModeFUSE.
func (s *Shell) onMount() (bool, error) {
	avail := s.ws.MountPolicy() == nil && fuseAvailable()
	switch s.opts.Mode {
	case ModeCopy:
		return false, nil
	case ModeFUSE:
		if !avail {
			return false, fmt.Errorf("exec: %w (needs /dev/fuse and a workspace without mounts)", ErrNoFUSE)
		}
		return true, nil
	}
	// Auto: the mount where it wins, a work dir with nothing materialized
	// (docs/decisions/020-exec-on-fuse.md).
	return avail && s.st.man == nil && !materialized(s.dir), nil
}

// materialized reports whether work dir dir holds anything.
func materialized(dir string) bool {
	f, err := os.Open(dir)
	if err != nil {
		return false
	}
	defer f.Close()
	names, _ := f.Readdirnames(1)
	return len(names) > 0
}

// fuseAvailable reports whether this process can mount FUSE file
// systems: /dev/fuse, and for a process that is not root fusermount3
// (Debian package fuse3), which mounts for it.
func fuseAvailable() bool {
	f, err := os.OpenFile("/dev/fuse", os.O_RDWR, 0)
	if err != nil {
		return false
	}
	f.Close()
	if os.Geteuid() != 0 {
		if _, err := exec.LookPath("fusermount3"); err != nil {
			return false
		}
	}
	return true
}

// cleanMount removes what a killed process left of a run on the mount: a
// mount at the mount point (unmounted lazily) and the scratch fork it
// recorded. The caller holds the work dir's lock.
func (s *Shell) cleanMount(ctx context.Context) error {
	if err := unmountStale(s.stateDir()); err != nil {
		return err
	}
	id, err := os.ReadFile(s.scratchFile())
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if err := s.ws.DeleteScratch(ctx, string(id)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return os.Remove(s.scratchFile())
}

// unmountStale unmounts a run's mount point left in state directory
// state by a killed process (a dead FUSE mount fails every access).
func unmountStale(state string) error {
	mp := filepath.Join(state, "mnt")
	mounted, err := fusefs.Mounted(mp)
	if err != nil || !mounted {
		return err
	}
	if err := fusefs.Unmount(mp); err != nil {
		return fmt.Errorf("exec: unmount a stale mount: %w", err)
	}
	return nil
}

// execOnMount runs the command on a FUSE mount of a scratch fork of the
// workspace (ModeFUSE) and applies what it changed in one batch: the
// exact changes of the fork since it was made (vfs.Diff), applied with
// vfs.ApplyDiff. The work dir is not touched.
func (s *Shell) execOnMount(ctx context.Context, r *run, res *provider.ExecResult, checkpoint *string) error {
	label := checkpointLabel(r.req.Command)
	if err := s.cleanMount(ctx); err != nil {
		return fmt.Errorf("exec: %w", err)
	}
	u, err := s.ws.Usage(ctx)
	if err != nil {
		return fmt.Errorf("exec: %w", err)
	}
	// The scratch fork's quota is a backstop of the disk limit, at twice
	// it: the meter kills a run past the limit, and the workspace's own
	// quota refuses the pull-back whole, as in ModeCopy.
	name := "exec-" + randomName()
	if err := os.WriteFile(s.scratchFile(), []byte(name), 0o600); err != nil {
		return fmt.Errorf("exec: %w", err)
	}
	scratch, err := s.ws.ScratchFork(ctx, name, meta.Quota{MaxBytes: u.Bytes + 2*r.limits.Disk})
	if err != nil {
		return fmt.Errorf("exec: %w", err)
	}
	defer func() {
		if err := s.ws.DeleteScratch(context.WithoutCancel(ctx), scratch.ID()); err == nil {
			os.Remove(s.scratchFile())
		}
	}()
	before, err := scratch.Root(ctx)
	if err != nil {
		return fmt.Errorf("exec: %w", err)
	}
	mp := s.mountDir()
	if err := os.MkdirAll(mp, 0o700); err != nil {
		return fmt.Errorf("exec: %w", err)
	}
	owner := uint32(r.hostUID)
	if owner == 0 {
		owner = uint32(os.Getuid())
	}
	srv, err := fusefs.Mount(ctx, mp, scratch.FS, fusefs.Options{AllowOther: r.hostUID != 0, UID: owner, GID: owner})
	if err != nil {
		return fmt.Errorf("exec: %w", err)
	}
	defer srv.Unmount()
	r.workDir = mp
	m := &usageMeter{ctx: ctx, fs: scratch.FS, base: u.Bytes}
	m.next = time.Now().Add(minDiskPoll)
	r.disk = m
	out, err := s.runCommand(ctx, r, res)
	if uerr := srv.Unmount(); err == nil && uerr != nil {
		err = fmt.Errorf("exec: %w", uerr)
	}
	if err != nil {
		return err
	}
	if out.diskExceeded {
		res.Usage.DiskGrowth = m.final()
		return nil
	}
	after, err := scratch.Root(ctx)
	if err != nil {
		return fmt.Errorf("exec: %w", err)
	}
	from, to := scratch.AtRoot(before), scratch.AtRoot(after)
	script, err := vfs.Diff(ctx, from, to, vfs.DiffOptions{})
	if err != nil {
		return fmt.Errorf("exec: %w", err)
	}
	if res.Usage.DiskGrowth = grown(script); res.Usage.DiskGrowth > r.limits.Disk {
		// The run ended before a poll saw it cross the limit.
		res.Killed = "disk limit " + size(r.limits.Disk)
		return nil
	}
	return s.applyScratch(ctx, from, to, script, label, res, checkpoint)
}

// grown is how many bytes a script's files grew by, each file's growth
// (new files whole; shrunk and deleted ones give nothing back), as the
// work dir's scan counts it (growth).
func grown(script []vfs.Change) int64 {
	var n int64
	for _, c := range script {
		if c.Type == "file" && (c.Op == vfs.Added || c.Op == vfs.Modified) && c.Link == "" {
			n += max(0, c.Size-c.OldSize)
		}
	}
	return n
}

// applyScratch applies script, the changes that turn state from into to
// (the scratch fork before and after the command), to the workspace in
// one batch, and reports them as the work dir's pull-back does.
func (s *Shell) applyScratch(ctx context.Context, from, to *vfs.FS, script []vfs.Change, label string, res *provider.ExecResult, checkpoint *string) error {
	local, err := s.localChanges(ctx, from)
	if err != nil {
		return err
	}
	var kept []vfs.Change
	var dropped []provider.Change
	for _, c := range script {
		if reason := s.dropStep(ctx, c, local); reason != "" {
			dropped = append(dropped, reportStep(ctx, to, c, reason)...)
			continue
		}
		kept = append(kept, c)
	}
	changed := report(ctx, to, kept)
	res.Usage.FilesChanged = len(changed) + len(dropped)
	res.Dropped = dropped
	if len(kept) == 0 {
		res.PulledBack = true
		res.Changed = []provider.Change{}
		return nil
	}
	if s.opts.AutoCheckpoint {
		if *checkpoint, err = s.ws.AutoCheckpoint(ctx, label); err != nil {
			return fmt.Errorf("exec: checkpoint before pulling changes: %w", err)
		}
	}
	err = s.ws.FS.Batch(ctx, func(b *vfs.FS) error { return vfs.ApplyDiff(ctx, b, to, kept) })
	if err != nil {
		res.PullError = fmt.Sprintf("exec: pull-back refused, none of the command's changes were kept: %v", err)
		reason := failReason(err)
		for _, c := range changed {
			c.Reason = reason
			res.Dropped = append(res.Dropped, c)
		}
		return nil
	}
	res.Changed, res.PulledBack = changed, true
	return nil
}

// localChanges returns the paths the workspace changed since state from
// (direct writes while the command ran), when Options.OnConflict asks.
func (s *Shell) localChanges(ctx context.Context, from *vfs.FS) (map[string]bool, error) {
	if s.opts.OnConflict == nil {
		return nil, nil
	}
	root, err := s.ws.Root(ctx)
	if err != nil {
		return nil, fmt.Errorf("exec: %w", err)
	}
	changes, err := vfs.Diff(ctx, from, s.ws.AtRoot(root), vfs.DiffOptions{})
	if err != nil {
		return nil, fmt.Errorf("exec: %w", err)
	}
	local := map[string]bool{}
	for _, c := range changes {
		local[c.Path] = true
		if c.OldPath != "" {
			local[c.OldPath] = true
		}
	}
	return local, nil
}

// dropStep returns why step c of the command's changes is not applied
// ("" to apply it), as the work dir's pull-back decides (puller.drop).
func (s *Shell) dropStep(ctx context.Context, c vfs.Change, local map[string]bool) string {
	switch c.Type {
	case "fifo", "socket", "chardev", "blockdev":
		if c.Op != vfs.Deleted {
			return reasonSpecial
		}
	}
	for _, p := range []string{c.Path, c.OldPath} {
		if p == "" {
			continue
		}
		for _, ro := range s.opts.ReadOnly {
			if under(p, ro) {
				return reasonReadOnly
			}
		}
		if local[p] && s.opts.OnConflict(ctx, Conflict{Path: p, Op: opOf(c)}) == KeepLocal {
			return reasonKeptLocal
		}
	}
	return ""
}

// opOf names a step as the results do.
func opOf(c vfs.Change) string {
	switch c.Op {
	case vfs.Deleted:
		return opDeleted
	case vfs.Modified:
		return opModified
	}
	return opCreated
}

// report lists a script's changes as the work dir's pull-back reports
// them: deletions first (a removed directory alone, not what it held),
// then the rest by path, a path deleted and created again as modified,
// and a renamed entry as the old path deleted and the new one created
// with everything beneath it.
func report(ctx context.Context, to *vfs.FS, script []vfs.Change) []provider.Change {
	ops := map[string]string{}
	deleted := map[string]bool{}
	for _, c := range script {
		switch c.Op {
		case vfs.Deleted:
			deleted[c.Path] = true
		case vfs.Renamed:
			deleted[c.OldPath] = true
			ops[c.Path] = opCreated
			for _, p := range beneath(ctx, to, c.Path) {
				ops[p] = opCreated
			}
		default:
			ops[c.Path] = opOf(c)
		}
	}
	var out []provider.Change
	for p := range deleted {
		if ops[p] != "" {
			ops[p] = opModified // replaced
			continue
		}
		if !deleted[path.Dir(p)] {
			out = append(out, provider.Change{Path: p, Op: opDeleted})
		}
	}
	slices.SortFunc(out, func(a, b provider.Change) int { return strings.Compare(a.Path, b.Path) })
	n := len(out)
	for p, op := range ops {
		out = append(out, provider.Change{Path: p, Op: op})
	}
	slices.SortFunc(out[n:], func(a, b provider.Change) int { return strings.Compare(a.Path, b.Path) })
	return out
}

// reportStep reports one dropped step.
func reportStep(ctx context.Context, to *vfs.FS, c vfs.Change, reason string) []provider.Change {
	out := report(ctx, to, []vfs.Change{c})
	for i := range out {
		out[i].Reason = reason
	}
	return out
}

// beneath lists the paths under directory dir of to (none for a file).
func beneath(ctx context.Context, to *vfs.FS, dir string) []string {
	var out []string
	entries, err := to.ReadDir(ctx, dir)
	if err != nil {
		return nil
	}
	for _, e := range entries {
		p := path.Join(dir, e.Name())
		out = append(out, p)
		if e.IsDir() {
			out = append(out, beneath(ctx, to, p)...)
		}
	}
	return out
}

// usageMeter measures a run's growth on the mount: the scratch fork's
// recorded usage (logical bytes of its files, kept by every write) over
// what it held when the run started. Reading it is one lookup, so it is
// polled at minDiskPoll.
type usageMeter struct {
	ctx  context.Context
	fs   *vfs.FS
	base int64
	next time.Time
}

func (m *usageMeter) growth(now time.Time) (int64, bool) {
	if now.Before(m.next) {
		return 0, false
	}
	m.next = now.Add(minDiskPoll)
	return m.final(), true
}

func (m *usageMeter) final() int64 {
	u, err := m.fs.Usage(m.ctx)
	if err != nil {
		return 0
	}
	return u.Bytes - m.base
}

var _ meter = (*usageMeter)(nil)
