package sandbox

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	forkspace "github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/audit"
	"github.com/forkspace/forkspace/auth"
	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/execpolicy"
	"github.com/forkspace/forkspace/provider"
	"github.com/forkspace/forkspace/vfs"
)

// Defaults of Options.
const (
	DefaultTimeout   = 60 * time.Second
	DefaultMaxOutput = 64 << 10
)

// Options configure a Shell. The zero value means defaults.
type Options struct {
	// WorkDir is the host directory the workspace is materialized in, kept
	// between runs. Default: os.TempDir()/forkspace-sandbox-<uid>/<workspace
	// ID> (that parent is checked to be this user's, mode 0700, or 0710 for
	// group HostGID under a root server). State files live beside it, in
	// WorkDir + ".state". Under a root server every ancestor must be
	// searchable by others or group HostGID (see Ownership in the package
	// documentation).
	WorkDir string
	// Ignore lists paths never materialized nor pulled back (see
	// DefaultIgnore for the syntax); they stay in the work dir between runs,
	// like caches. nil means DefaultIgnore; an empty slice ignores nothing.
	Ignore []string
	// ReadOnly lists workspace path prefixes whose changes are dropped
	// (reported in ExecResult.Dropped) instead of pulled back.
	ReadOnly []string
	// OnConflict decides paths both the command and the workspace changed
	// during a run. nil accepts the command's state.
	OnConflict ConflictFunc
	// Timeout bounds a command when its request sets none (default
	// DefaultTimeout).
	Timeout time.Duration
	// MaxTimeout caps a request's Timeout (default the larger of
	// DefaultMaxTimeout and Timeout).
	MaxTimeout time.Duration
	// Limits are a run's limits when its request sets none; zero fields
	// take DefaultLimits.
	Limits provider.Limits
	// MaxLimits cap what a request may ask for (a request above is lowered
	// to them); zero fields take Limits.
	MaxLimits provider.Limits
	// NoCgroups enforces the limits with rlimits only, even where this
	// process could create cgroups.
	NoCgroups bool
	// Env is the operator's environment for commands, over the defaults
	// (PATH, HOME ScratchHome, TMPDIR /tmp, LANG C.UTF-8): a PATH with
	// /usr/local/go/bin, a proxy. A request's Env goes over it, except for
	// the names in LockEnv (such a request fails with fs.ErrPermission).
	Env     map[string]string
	LockEnv []string
	// Runs bounds the commands running at once across the Shells sharing
	// it; nil shares a process-wide Limiter of DefaultMaxRuns.
	Runs *Limiter
	// MaxOutput caps stdout and stderr each when the request sets no cap
	// (default DefaultMaxOutput).
	MaxOutput int
	// AutoCheckpoint checkpoints the workspace before pulling a command's
	// changes back (label "exec: <command>"), so the run can be rewound.
	AutoCheckpoint bool
	// Audit records every Exec (tool "exec"); nil records nothing.
	Audit audit.Recorder
	// Bwrap is the bubblewrap executable (default "bwrap" on PATH).
	Bwrap string
	// Network is the server's network policy (default: off). A
	// workspace's and a token's policy narrow it (see Network in the
	// package documentation); a request can only ask for less.
	Network execpolicy.Network
	// Idle is how long a work dir in the default base may go without a
	// run before Exec's sweep (at most hourly per process) removes it
	// (default DefaultIdle; negative: never). Work dirs elsewhere are not
	// swept; see Sweep.
	Idle time.Duration
	// Mode is where /workspace comes from: the materialized work dir
	// (ModeCopy), a FUSE mount of a scratch fork (ModeFUSE), or per run
	// (ModeAuto, the default; see Modes in the package documentation).
	Mode Mode
	// Root runs commands as uid 0 inside the sandbox's user namespace
	// (default: SandboxUID), for commands that insist on being root
	// (package managers). It grants no capability: root inside can do no
	// more to the host than the default user.
	Root bool
}

// Stats count what the last materialization wrote to the work dir.
type Stats struct {
	// Full is set when it walked the whole workspace (first run, or state
	// it could not trust).
	Full    bool
	Written int // files written
	Dirs    int // directories created
	Links   int // symbolic links created
	Chmods  int // permission changes
	Removed int // paths removed
	// Reused counts entries a full sync found already in place (a work dir
	// kept from an earlier process) and did not rewrite.
	Reused int
	// Seeded counts entries a fork's first sync took from its parent's
	// work dir instead of the workspace (see Materialize in the package
	// doc); Cloned of them are files that share the parent's extents
	// (reflink), Copied is the bytes of the others.
	Seeded, Cloned int
	Copied         int64
	// Walked is set when the scan after the command walked the whole work
	// dir instead of the paths inotify named.
	Walked bool
}

// Shell runs commands against one workspace, confined by bubblewrap. It
// implements provider.Shell. Execs on one work dir run one at a time (in
// this process and across processes: a lock file), so concurrent calls are
// safe and serialised; one waiting its turn gives up when its ctx ends.
type Shell struct {
	ws   *forkspace.Workspace
	opts Options
	dir  string
	st   *dirState
}

var _ provider.Shell = (*Shell)(nil)

// dirState is what this process knows of one work dir, shared by every
// Shell on it.
type dirState struct {
	// mu is held by the run in flight, the whole run: the others wait
	// their turn, and give up waiting when their ctx ends.
	mu     turn
	wsID   string
	synced cas.Hash // the workspace root the work dir mirrors
	// man is nil when the work dir's contents are unknown: the next run
	// rewrites it all.
	man manifest
	// pending are paths the next sync visits besides the diff since synced
	// (true: with their subtree): what a run pulled or dropped, and what
	// the workspace changed while it ran.
	pending map[string]bool
	// token is the value this process last wrote to the state dir's
	// token file; another value there means another process used the dir.
	token string
	stats Stats
	// watch reports the paths commands change (nil: scans walk all).
	watch *watcher
	// walkOnly disables the watcher (tests of the full scan).
	walkOnly bool
	// owner is the host uid (and gid) of the run in progress, which the
	// work dir's entries get; 0: forkspace's own (not root).
	owner int
	lease *uidLease
}

var states sync.Map // absolute work dir → *dirState

// New returns a Shell for ws. Nothing touches the host until the first
// Exec. Close it when the workspace is closed: the process keeps the work
// dir's manifest and inotify watches until then (watchers are pooled, at
// most maxWatchers at a time).
func New(ws *forkspace.Workspace, opts Options) *Shell {
	if opts.WorkDir == "" {
		opts.WorkDir = filepath.Join(defaultBase(), ws.ID())
	}
	if opts.Ignore == nil {
		opts.Ignore = DefaultIgnore
	}
	opts.Timeout = cmpOr(opts.Timeout, DefaultTimeout)
	opts.MaxTimeout = cmpOr(opts.MaxTimeout, max(DefaultMaxTimeout, opts.Timeout))
	opts.Limits = orDefault(opts.Limits, DefaultLimits)
	opts.MaxLimits = orDefault(opts.MaxLimits, opts.Limits)
	opts.MaxOutput = cmpOr(opts.MaxOutput, DefaultMaxOutput)
	opts.Bwrap = cmpOr(opts.Bwrap, "bwrap")
	if opts.Runs == nil {
		opts.Runs = defaultLimiter()
	}
	ro := make([]string, 0, len(opts.ReadOnly))
	for _, p := range opts.ReadOnly {
		ro = append(ro, path.Clean("/" + p)[1:])
	}
	opts.ReadOnly = ro
	dir, err := filepath.Abs(opts.WorkDir)
	if err != nil {
		dir = filepath.Clean(opts.WorkDir)
	}
	st, _ := states.LoadOrStore(dir, &dirState{mu: make(turn, 1)})
	return &Shell{ws: ws, opts: opts, dir: dir, st: st.(*dirState)}
}

func cmpOr[T comparable](v, def T) T {
	var zero T
	if v == zero {
		return def
	}
	return v
}

// WorkDir returns the host directory the workspace is materialized in.
func (s *Shell) WorkDir() string { return s.dir }

// Stats returns what the last materialization of the work dir wrote.
func (s *Shell) Stats() Stats {
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	return s.st.stats
}

// Exec runs req.Command with /bin/sh -c in the materialized workspace and
// pulls the command's changes back. A command that fails or times out is
// not an error (see ExitCode and TimedOut); errors are an empty command or
// bad environment (fs.ErrInvalid), bubblewrap missing
// (errors.ErrUnsupported), a host that cannot confine the command
// (ErrUnconfined, which matches errors.ErrUnsupported too), ctx done, and
// failures to sync. The pull-back is atomic: the command's changes land
// all at once (ExecResult.PulledBack) or, when the workspace refuses them
// (quota, disk full, any error), none does, the result says why
// (PullError, every change in Dropped) and the work dir returns to the
// workspace's state.
func (s *Shell) Exec(ctx context.Context, req provider.ExecRequest) (provider.ExecResult, error) {
	return s.ExecStream(ctx, req, nil, nil)
}

// ExecStream is Exec that also copies the command's stdout and stderr, as
// they come, to stdout and stderr (nil: not copied). A slow writer slows
// the command down (the pipe fills); the result keeps the capped copies.
func (s *Shell) ExecStream(ctx context.Context, req provider.ExecRequest, stdout, stderr io.Writer) (res provider.ExecResult, err error) {
	start := time.Now()
	var checkpoint string
	if s.opts.Audit != nil {
		// The run's entry lists what it pulled back.
		ctx = audit.Cover(ctx, s.ws.ID())
	}
	defer func() {
		res.Duration = time.Since(start)
		err = errors.Join(err, s.record(ctx, req, res, err, checkpoint))
	}()
	if strings.TrimSpace(req.Command) == "" || strings.ContainsRune(req.Command, 0) {
		return res, fmt.Errorf("exec: %w: empty command or NUL byte", fs.ErrInvalid)
	}
	if req.Timeout < 0 || req.MaxOutput < 0 {
		return res, fmt.Errorf("exec: %w: negative timeout or output cap", fs.ErrInvalid)
	}
	pol, err := s.policy(ctx)
	if err != nil {
		return res, err
	}
	if req.Network && pol.Network.Mode == execpolicy.Off {
		return res, fmt.Errorf("exec: %w", ErrNetworkDenied)
	}
	limits, err := effective(req.Limits, s.opts.Limits, pol.Limits)
	if err != nil {
		return res, err
	}
	bwrap, err := exec.LookPath(s.opts.Bwrap)
	if err != nil {
		return res, fmt.Errorf("exec: bubblewrap (Debian package bubblewrap) not found: %w: %w", errors.ErrUnsupported, err)
	}
	st := s.st
	if err := st.mu.lockContext(ctx); err != nil {
		return res, fmt.Errorf("exec: waiting for the run in flight: %w", err)
	}
	defer st.mu.Unlock()
	st.touchWatch()
	unlock, err := s.lock(ctx)
	if err != nil {
		return res, err
	}
	defer unlock()
	if st.owner, err = s.own(); err != nil {
		return res, err
	}
	defer st.disown()
	s.sweepIdle(ctx)
	done := false
	defer func() {
		if !done {
			st.man = nil
		}
	}()
	ignore := newMatcher(s.opts.Ignore)
	r := &run{bwrap: bwrap, workDir: s.dir, etcDir: s.stateDir(), req: req, root: s.opts.Root, hostUID: st.owner, limits: limits, network: *pol.Network,
		timeout: min(cmpOr(req.Timeout, s.opts.Timeout), s.opts.MaxTimeout),
		max:     cmpOr(req.MaxOutput, s.opts.MaxOutput),
		opEnv:   s.opts.Env, lockEnv: s.opts.LockEnv}
	if err := r.verify(ctx); err != nil {
		return res, err
	}
	r.stream = [2]io.Writer{stdout, stderr} // not the probe's output
	if !s.opts.NoCgroups {
		r.cg = hostCgroups()
	}
	onMount, err := s.onMount()
	if err != nil {
		return res, err
	}
	if onMount {
		done = true // the work dir is not touched
		return res, s.execOnMount(ctx, r, &res, &checkpoint)
	}
	host, err := os.OpenRoot(s.dir)
	if err != nil {
		return res, fmt.Errorf("exec: open work dir: %w", err)
	}
	defer host.Close()
	if err := s.materialize(ctx, host); err != nil {
		return res, fmt.Errorf("exec: %w", err)
	}
	r.disk = newDiskMeter(s.dir, st.man, ignore)
	out, err := s.runCommand(ctx, r, &res)
	if err != nil {
		return res, err
	}
	if out.diskExceeded {
		res.Usage.DiskGrowth = r.disk.final()
		return res, s.discardRun(ctx, host, &done)
	}

	sc := &scanner{ctx: ctx, dir: s.dir, host: host, man: st.man, ignore: ignore, watch: st.watch}
	var changes []hostChange
	var special []string
	if ev, ok := st.drainEvents(); ok {
		changes, special, err = sc.scanEvents(ev)
	} else {
		st.stats.Walked = true
		changes, special, err = sc.scan()
	}
	if err != nil {
		return res, fmt.Errorf("exec: %w", err)
	}
	if res.Usage.DiskGrowth = growth(changes, st.man); res.Usage.DiskGrowth > limits.Disk {
		// The run ended before a poll saw it cross the limit.
		res.Killed = "disk limit " + size(limits.Disk)
		return res, s.discardRun(ctx, host, &done)
	}
	if len(changes) > 0 && s.opts.AutoCheckpoint {
		if checkpoint, err = s.ws.AutoCheckpoint(ctx, checkpointLabel(req.Command)); err != nil {
			return res, fmt.Errorf("exec: checkpoint before pulling changes: %w", err)
		}
	}
	p := &puller{ctx: ctx, host: host, man: st.man, readOnly: s.opts.ReadOnly,
		policy: s.ws.MountPolicy(), resolve: s.opts.OnConflict, pending: st.pending}
	res.Changed, res.Dropped, err = p.land(s.ws.FS, changes)
	for _, sp := range special {
		res.Dropped = append(res.Dropped, provider.Change{Path: sp, Op: opCreated, Reason: reasonSpecial})
		p.leave(sp)
	}
	res.Usage.FilesChanged = len(res.Changed) + len(res.Dropped)
	if err != nil {
		// Nothing landed: the result says so and the work dir goes back
		// to the workspace's state.
		res.PullError = fmt.Sprintf("exec: pull-back refused, none of the command's changes were kept: %v", err)
		return res, s.discardRun(ctx, host, &done)
	}
	res.PulledBack = true
	if len(changes)+len(special) > 0 {
		if err := s.advance(ctx); err != nil {
			return res, fmt.Errorf("exec: %w", err)
		}
	}
	if err := s.writeToken(); err != nil {
		return res, err
	}
	done = true
	return res, nil
}

// policy is a run's exec policy: the server's (Options.Network and
// MaxLimits) narrowed by the workspace's and by the caller's token's
// (auth.FromContext). Its Network is never nil.
func (s *Shell) policy(ctx context.Context) (execpolicy.Policy, error) {
	network := s.opts.Network
	p := execpolicy.Policy{Network: &network, Limits: s.opts.MaxLimits}
	wp, err := s.ws.ExecPolicy(ctx)
	if err != nil {
		return p, fmt.Errorf("exec: %w", err)
	}
	p = p.Narrow(wp)
	if scope, ok := auth.FromContext(ctx); ok {
		p = p.Narrow(scope.Exec)
	}
	return p, nil
}

// runCommand runs r in a run slot and puts its outcome in res.
func (s *Shell) runCommand(ctx context.Context, r *run, res *provider.ExecResult) (outcome, error) {
	out, err := s.runQueued(ctx, r, &res.Queued)
	res.Limits, res.Mechanism = r.limits, out.mech
	res.Killed, res.Refused, res.Lingering, res.Usage = out.killed, out.refused, out.lingering, out.usage
	if err != nil {
		return out, err
	}
	res.ExitCode, res.Stdout, res.Stderr, res.TimedOut = out.exitCode, out.stdout, out.stderr, out.timedOut
	return out, nil
}

// runQueued waits for a run slot (Options.Runs; queued is how long),
// brings up the run's network if it asked for one, and runs the command.
func (s *Shell) runQueued(ctx context.Context, r *run, queued *time.Duration) (out outcome, err error) {
	if *queued, err = s.opts.Runs.acquire(ctx); err != nil {
		return out, err
	}
	defer s.opts.Runs.release()
	if r.req.Network {
		if r.net, err = newNetRun(ctx, r.network); err != nil {
			return out, err
		}
		if err := writeEtcFiles(s.stateDir(), r.net.etcFiles()); err != nil {
			return out, fmt.Errorf("exec: %w", err)
		}
	}
	out, err = r.start(ctx)
	if r.net != nil {
		err = errors.Join(err, r.net.stop())
	}
	return out, err
}

// discardRun drops what a run wrote when none of it is kept (it crossed
// the disk limit, or the pull-back was refused): the work dir is
// rematerialized from the workspace at once so the bytes leave the host
// disk.
func (s *Shell) discardRun(ctx context.Context, host *os.Root, done *bool) error {
	s.st.man = nil
	if s.st.watch != nil {
		s.st.watch.drain()
	}
	if err := s.materialize(ctx, host); err != nil {
		return fmt.Errorf("exec: discard the run's changes: %w", err)
	}
	if err := s.writeToken(); err != nil {
		return err
	}
	*done = true
	return nil
}

// drainEvents returns the paths the command changed, when a watcher can
// tell.
func (st *dirState) drainEvents() (events, bool) {
	if st.watch == nil {
		return events{}, false
	}
	return st.watch.drain()
}

// checkpointLabel labels the automatic checkpoint of a run.
func checkpointLabel(command string) string {
	const max = 200
	label := "exec: " + strings.ToValidUTF8(command, "?")
	if len(label) > max {
		label = strings.ToValidUTF8(label[:max], "") + "…"
	}
	return label
}

// materialize brings the work dir up to the workspace's current state.
func (s *Shell) materialize(ctx context.Context, host *os.Root) error {
	st := s.st
	// Lazy mount stubs hold no bytes until read: hydrate them so the
	// command sees the files, not holes.
	if s.ws.MountPolicy() != nil {
		if err := s.ws.Prefetch(ctx, ""); err != nil {
			return fmt.Errorf("materialize: hydrate mounts: %w", err)
		}
	}
	root, err := s.ws.Root(ctx)
	if err != nil {
		return fmt.Errorf("materialize: %w", err)
	}
	m := &materializer{ctx: ctx, snap: s.ws.AtRoot(root), host: host, man: st.man, owner: st.owner,
		ignore: newMatcher(s.opts.Ignore), stats: &Stats{}}
	full := st.man == nil || st.wsID != s.ws.ID()
	if full {
		st.man, st.pending, st.wsID = manifest{}, map[string]bool{}, s.ws.ID()
		st.dropWatch()
		m.man, m.stats.Full = st.man, true
		seeded, err := s.seed(ctx, host, m.stats)
		if err != nil {
			return fmt.Errorf("materialize: %w", err)
		}
		full, m.stats.Full = !seeded, !seeded
	}
	m.watch = st.watch
	if full {
		err = m.sync(nil, nil)
	} else {
		err = m.sync(s.ws.AtRoot(st.synced), st.pending)
	}
	st.stats = *m.stats
	if err != nil {
		return err
	}
	if st.watch == nil && !st.walkOnly {
		st.watchAll(s.dir)
	}
	if st.watch != nil {
		st.watch.drain() // the events of the sync itself
	}
	st.synced = root
	clear(st.pending)
	return nil
}

// advance moves the mirrored root past a pull: the paths that changed in
// the workspace since the work dir was materialized (pulled, or written
// directly while the command ran) become pending, and the new root is the
// base of the next diff. Pulled paths cost the next sync one Lstat each.
func (s *Shell) advance(ctx context.Context) error {
	st := s.st
	root, err := s.ws.Root(ctx)
	if err != nil {
		return err
	}
	changes, err := vfs.Diff(ctx, s.ws.AtRoot(st.synced), s.ws.AtRoot(root), vfs.DiffOptions{})
	if err != nil {
		return err
	}
	addChanges(st.pending, changes)
	st.synced = root
	return nil
}

// stateDir holds the lock, the token and the sandbox's /etc files.
func (s *Shell) stateDir() string { return s.dir + ".state" }

// lock creates the work and state directories if needed and takes the
// work dir's lock file (flock), waiting for another process's run until
// ctx ends. It drops the in-memory manifest when another process used the
// dir since.
func (s *Shell) lock(ctx context.Context) (unlock func(), err error) {
	if filepath.Dir(s.dir) == defaultBase() {
		if err := privateDir(defaultBase()); err != nil {
			return nil, fmt.Errorf("exec: create work dir: %w", err)
		}
	}
	for _, d := range []string{s.dir, s.stateDir()} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return nil, fmt.Errorf("exec: create work dir: %w", err)
		}
	}
	if err := searchable(s.stateDir()); err != nil {
		return nil, fmt.Errorf("exec: create work dir: %w", err)
	}
	f, err := lockFileContext(ctx, s.stateDir())
	if errors.Is(err, errSwept) {
		return s.lock(ctx) // removed by Sweep while this waited: create it again
	}
	if err != nil {
		return nil, fmt.Errorf("exec: lock work dir: %w", err)
	}
	unlock = func() { f.Close() }
	token, err := os.ReadFile(filepath.Join(s.stateDir(), "token"))
	if err != nil || string(token) != s.st.token {
		s.st.man = nil
	}
	if err := writeEtc(s.stateDir()); err != nil {
		unlock()
		return nil, fmt.Errorf("exec: %w", err)
	}
	return unlock, nil
}

// defaultBase is the directory default work dirs live in, one per user.
func defaultBase() string {
	return filepath.Join(os.TempDir(), fmt.Sprintf("forkspace-sandbox-%d", os.Getuid()))
}

// privateDir creates dir, mode 0700, and checks that it is a directory (not
// a link another user planted in the shared temporary directory) that this
// user owns and nobody else can enter, but for the sandbox's host uids of
// a root server, which may search it (group HostGID, mode 0710).
func privateDir(dir string) error {
	if err := os.Mkdir(dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return err
	}
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	sandboxes := hostUIDs() && fi.Mode().Perm() == 0o710 && ok && st.Gid == HostGID
	if !fi.IsDir() || !ok || int(st.Uid) != os.Geteuid() || fi.Mode().Perm()&0o077 != 0 && !sandboxes {
		return &fs.PathError{Op: "check", Path: dir, Err: fmt.Errorf("%w: not a private directory of this user", fs.ErrPermission)}
	}
	return searchable(dir)
}

// own leases the host uid the run's commands run as when forkspace runs
// as root (0 otherwise: the command runs as forkspace's uid), and gives
// it the work dir when another uid of the range had it: the next sync then
// checks every entry (their ctimes moved).
func (s *Shell) own() (int, error) {
	if !hostUIDs() {
		return 0, nil
	}
	if err := checkReachable(s.dir); err != nil {
		return 0, err
	}
	l, err := leaseUID(s.dir)
	if err != nil {
		return 0, err
	}
	if uid, ok := ownerUID(s.dir); !ok || uid != l.uid {
		if err := chownTree(s.dir, l.uid); err != nil {
			l.release()
			return 0, fmt.Errorf("exec: give the work dir to host uid %d: %w", l.uid, err)
		}
		s.st.man = nil
	}
	s.st.lease = l
	return l.uid, nil
}

// disown releases the run's host uid.
func (st *dirState) disown() {
	if st.lease != nil {
		st.lease.release()
	}
	st.lease, st.owner = nil, 0
}

// writeToken marks the work dir as last synced by this process.
func (s *Shell) writeToken() error {
	token := randomName()
	if err := os.WriteFile(filepath.Join(s.stateDir(), "token"), []byte(token), 0o600); err != nil {
		return fmt.Errorf("exec: write state: %w", err)
	}
	s.st.token = token
	return nil
}

// record appends the run to the audit log, if one is configured.
func (s *Shell) record(ctx context.Context, req provider.ExecRequest, res provider.ExecResult, err error, checkpoint string) error {
	if s.opts.Audit == nil {
		return nil
	}
	digest, derr := audit.Digest(req)
	if derr != nil {
		return derr
	}
	a := audit.ActorFrom(ctx)
	e := audit.Entry{WorkspaceID: s.ws.ID(), Actor: a.Name, Session: a.Session, Tool: "exec",
		ArgsDigest: digest, Duration: res.Duration, Checkpoint: checkpoint, Command: audit.Command(req.Command)}
	switch {
	case err != nil:
		e.Error = err.Error()
	case res.Killed != "":
		e.Error = "killed: " + res.Killed
	case res.PullError != "":
		e.Error = res.PullError
	case res.ExitCode != 0:
		e.Error = fmt.Sprintf("exit status %d", res.ExitCode)
	}
	if err == nil {
		e.Detail = res.Ending() + "; " + res.Usage.String()
	}
	for _, c := range res.Changed {
		e.Changed = append(e.Changed, c.Path)
	}
	return s.opts.Audit.Record(context.WithoutCancel(ctx), e)
}

// Close releases what the process keeps for the work dir (its inotify
// watches). The work dir stays on disk for the next Shell, whose first run
// rematerializes it; its manifest stays in the state directory, where the
// first run of a fork in another process can seed from it (see Materialize
// in the package documentation). Runs in flight finish first; Close is
// idempotent.
func (s *Shell) Close() error {
	st := s.st
	st.mu.Lock()
	defer st.mu.Unlock()
	st.dropWatch()
	err := st.save(s.stateDir())
	st.man = nil
	if err != nil && !errors.Is(err, fs.ErrNotExist) { // no state dir: nothing ran
		return fmt.Errorf("close shell: save the manifest: %w", err)
	}
	return nil
}

// Discard closes the Shell and removes the work dir and its state
// directory from the host (for example when the workspace is deleted).
func (s *Shell) Discard() error {
	st := s.st
	st.mu.Lock()
	defer st.mu.Unlock()
	st.dropWatch()
	st.man = nil
	if err := errors.Join(os.RemoveAll(s.dir), os.RemoveAll(s.stateDir())); err != nil {
		return fmt.Errorf("discard work dir: %w", err)
	}
	return nil
}

// turn is a mutex whose lockContext gives up when its context ends: a
// run waiting for its turn on a work dir ends at once when it is killed.
type turn chan struct{}

func (t turn) Lock() { t <- struct{}{} }

func (t turn) Unlock() { <-t }

func (t turn) TryLock() bool {
	select {
	case t <- struct{}{}:
		return true
	default:
		return false
	}
}

// lockContext locks t, or fails with ctx's error once ctx ends.
func (t turn) lockContext(ctx context.Context) error {
	select {
	case t <- struct{}{}:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
