// Package sandbox runs shell commands against a workspace, confined by
// bubblewrap, and pulls what they changed back into the workspace. Shell
// implements provider.Shell:
//
//	sh := sandbox.New(ws, sandbox.Options{Audit: store.AuditLog()})
//	res, err := sh.Exec(ctx, provider.ExecRequest{Command: "go test ./..."})
//
// # Modes
//
// A run's /workspace is either a host work dir the workspace is
// materialized into (ModeCopy, below) or a FUSE mount of a scratch fork
// of the workspace (ModeFUSE): the fork (Workspace.ScratchFork, constant
// time, hidden) is mounted with package fusefs on the state directory's
// mnt, its owner 0 shown as the run's host uid (allow_other when that is
// not forkspace's own), and bound at /workspace with the same
// confinement. Afterwards the fork's changes (vfs.Diff of its root before
// and after: exact, no walk) are applied to the workspace with
// vfs.ApplyDiff in one batch — all or none, as the pull-back below, and
// reported in the same shape — and the fork is deleted; a copy of the
// mount that a process of the host made meanwhile (a mount namespace of
// its own) does not hold the run up (fusefs.Server.Unmount). The disk limit
// is measured on the fork's usage while it runs; its quota (twice the
// disk limit) is a backstop. A killed process leaves a dead mount and a
// scratch fork: the next run on the work dir removes both first (the
// fork's name is in the state directory, written before the fork is
// made), Sweep and RemoveWorkDir unmount
// before removing, and Store.Delete deletes a workspace's scratch forks.
//
// Options.Mode picks; the default, ModeAuto, uses the mount where it is
// faster (docs/decisions/020-exec-on-fuse.md): when the work dir holds
// nothing materialized — a fork's first run, a new workspace, a work dir
// swept after idling — so a fork's first run costs about what a run in
// its parent costs; a materialized work dir keeps the incremental sync,
// which is faster for ordinary runs. Workspaces with mounts, and hosts
// without /dev/fuse (or fusermount3 for a server that is not root),
// materialize; ModeFUSE refuses them with ErrNoFUSE.
//
// # Materialize
//
// In ModeCopy the workspace is mirrored into a host work dir (Options.WorkDir, by
// default os.TempDir()/forkspace-sandbox-<uid>/<workspace ID>, kept between
// runs). A manifest records, per path, the host state written or seen (type,
// permission bits, size, mtime, BLAKE3 of the content or the link target),
// the host identity (inode, ctime) and the workspace identity (inode,
// ctime) it mirrors. Each run diffs the workspace root the work dir
// mirrors against the current one (vfs.Diff: cost proportional to the
// change) and rewrites only paths whose workspace identity moved, so a
// run after a one-file change writes one file (Stats). The first run in a
// process, or after another process used the work dir (a token file) or a
// failed run, walks the whole workspace: host entries that pass a quick
// check (type; for files size, mtime and permission bits; for links the
// target) are kept, the others rewritten (Stats.Reused, Stats.Written).
// setuid and setgid bits are never materialized.
//
// A fork's first run starts from its parent's work dir when that one is
// materialized and idle (no run holds it in this or another process, by
// its lock) and its manifest is known: this process's, or, for a default
// work dir, the one a process left in the parent's state directory when
// it closed its Shell, as long as no run changed the dir since (the
// token). The parent's
// entries are recreated in the fork's empty work dir — files by reflink
// (FICLONE) where the file system supports it, else by copy_file_range,
// never by hard link, so nothing a command in the fork does reaches the
// parent's files — with the parent's manifest, hashes included, so no
// byte is read from the store; a parent file whose stat is not what its
// manifest says is written from the workspace instead. The sync then
// diffs the state the parent's dir mirrors against the fork's (vfs.Diff)
// and writes only the difference (Stats.Seeded, Cloned, Copied). Without
// such a parent the first run materializes everything. (Sharing the
// parent's files instead of copying them was evaluated and not adopted:
// docs/decisions/013; ModeAuto runs a fork's first run on the mount
// instead.)
//
// # Work dirs on disk
//
// A work dir and its state directory stay on the host between runs and
// processes. Shell.Discard and RemoveWorkDir remove them; a store opened
// with forkspace.Options.OnDelete set to RemoveWorkDir (the CLI and the
// server open theirs so) removes a workspace's default work dir when
// Store.Delete deletes it, from whichever surface; Sweep removes those of the default base that
// no run used for longer than an idle bound (default DefaultIdle, 24 h; a
// run marks its dir used by its lock file's mtime) or whose workspace is
// gone, skipping any a run holds. Exec sweeps the default base itself at
// most once an hour per process (Options.Idle; negative: never), and the
// CLI's gc sweeps it too. A run in a removed work dir materializes it
// again.
//
// # Confine
//
// The command runs as /bin/sh -c in bubblewrap (Debian package bubblewrap)
// with every namespace unshared (the network too: see Network), the work
// dir bound read-write at MountPoint (its working directory), /usr and
// the other system directories read-only, the dynamic linker's files from
// /etc, a synthesized /etc/passwd and /etc/group (never the host's), fresh
// /proc (with /proc/sys read-only), /dev, a /tmp of its own (a tmpfs
// bounded by the memory and disk limits, holding HOME, ScratchHome: caches
// and logs never reach the workspace), the rest of the root read-only,
// --die-with-parent and --new-session, and a scrubbed environment (PATH,
// HOME, TMPDIR and LANG, then Options.Env, then ExecRequest.Env except the
// names in Options.LockEnv). A timeout (default 60 s, at most
// Options.MaxTimeout) kills bubblewrap's process group; its pid namespace
// takes every process of the command with it. stdout and stderr are capped
// (default 64 KiB each) with a marker saying how many bytes were cut.
//
// The command never holds a capability on the host, also when forkspace
// runs as root:
//
//   - It runs as user "sandbox" (SandboxUID, 1000) in its own user
//     namespace, or as uid 0 there with Options.Root; either way bubblewrap
//     drops every capability (--cap-drop ALL: the bounding set too, so
//     setuid binaries gain nothing, and no_new_privs is set) and forbids
//     further user namespaces (--disable-userns).
//   - A seccomp filter (seccomp.go) fails mount and the new mount API,
//     pivot_root, chroot, unshare, setns, clone with namespace flags,
//     ptrace and process_vm_*, kexec, keyctl/add_key/request_key, bpf,
//     perf_event_open, userfaultfd, module loading, open_by_handle_at,
//     swapon/swapoff, reboot, clock and accounting calls and io_uring
//     (whose operations bypass seccomp) with EPERM, and calls of a foreign
//     ABI (i386 or x32 on x86-64) and clone3 with ENOSYS (libc then uses
//     clone, whose flags the filter checks).
//   - Once per process, Exec runs a probe with the same confinement and
//     checks /proc/self/status (no capability, no_new_privs, seccomp, the
//     expected uid); when the host cannot apply it (no user namespaces, an
//     old bubblewrap, no filter for the architecture) every Exec fails with
//     ErrUnconfined instead of running the command with more power.
//
// Ownership: the user namespace maps SandboxUID (or 0 with Root) to one
// host uid, and nothing else, so the command sees the work dir and
// everything materialized in it as its own and cannot chown anything (no
// CAP_CHOWN, one mapped uid); files of other host users appear as nobody.
// Which host uid:
//
//   - forkspace not root: its own uid. The work dir and everything in it,
//     what the command creates included, belong to forkspace's user.
//   - forkspace root: a host uid of its own per run in flight, from
//     HostUIDBase (HostUIDCount of them, gid the same number, supplementary
//     group HostGID), never root. A run leases one (a flock per uid in
//     /run/forkspace-sandbox-uids): the uid that owns its work dir
//     when no other run holds it, which is the usual case, else a free one,
//     and then the work dir is chowned to it first. Every entry of the work
//     dir belongs to that uid:gid on the host: materialization and seeding
//     chown what they write. bubblewrap and the command run as it (the gate
//     stays root and applies the rlimits, then starts bubblewrap through
//     setpriv, Debian package util-linux), so RLIMIT_NPROC binds (the
//     kernel exempts only root) and counts the processes of that run only:
//     a fork bomb in one workspace cannot take the process slots of
//     another's run. bubblewrap resolves the work dir and the sandbox's
//     /etc files as that uid: the default base and the state directories
//     are mode 0710, group HostGID, and a WorkDir elsewhere needs every
//     ancestor searchable by others or by HostGID (Exec says which one is
//     not). /proc/sys stays read-only and the sandbox's root is remounted
//     read-only all the same.
//
// Files pulled back into the workspace get the workspace's ownership,
// never the host uid: an existing entry keeps its owner, a new one gets
// uid and gid 0, the workspace's default.
//
// # Network
//
// Network access is the operator's decision: off by default, full, or an
// allowlist of host:port pairs (package execpolicy), at three levels — the
// server's (Options.Network; the CLI's --network), the workspace's
// (Workspace.ExecPolicy) and the caller's token's (auth.Scope.Exec, from
// ctx) — and a run gets the narrowest of them; the workspace's and the
// token's limit caps lower Options.MaxLimits the same way. A request can
// only ask for less: without ExecRequest.Network a run has no network
// under any policy, and asking for it where the run's policy is off fails
// with ErrNetworkDenied before anything runs. With the network the sandbox keeps its own network namespace
// (never the host's): slirp4netns (Debian package slirp4netns) attaches
// to it before the command starts (bubblewrap's --info-fd and --block-fd)
// with --disable-host-loopback, and nft rules inside the namespace (Debian
// package nftables, applied through nsenter; the command has no
// capability to change them) drop the host's own addresses (execpolicy.Full)
// or everything but the allowlist (execpolicy.Allow). So the server on the
// host's 127.0.0.1 and the host's other addresses are unreachable. The
// sandbox gets a synthesized /etc/resolv.conf (slirp's DNS forwarder;
// none with an allowlist) and /etc/hosts (the allowlist's names, resolved
// on the host when the run starts), plus the host's /etc/ssl and
// /etc/ca-certificates. Only IPv4 is routed.
//
// # Limits
//
// Every run has limits (ExecRequest.Limits; zero fields take
// Options.Limits, by default DefaultLimits, and values above
// Options.MaxLimits are lowered to them): CPU time and memory of the whole
// process tree, processes and threads alive at once, open files per
// process, and how many bytes the run may add to the work dir. bubblewrap
// starts behind a gate (a /bin/sh that waits on a pipe, then starts it and
// stays its parent), so the limits are in place before the first process
// of the command exists.
//
// No run outlives its server or its request: the gate gets SIGTERM when
// the server dies (its parent-death signal) and kills bubblewrap and the
// init of the run's pid namespace, which takes every process with it
// (bubblewrap's --die-with-parent does not survive the uid change inside
// the namespace); a timeout, a crossed limit or a cancelled ctx kill the
// same tree, and the run's cgroup.
//
// Where this process may create cgroups (root, or a delegated v2 subtree)
// each run gets its own group under "forkspace" in the process's own
// group: cgroup v2 (memory.max, pids.max; memory.peak, cpu.stat,
// cgroup.kill) or, on hosts whose memory and pids controllers are still
// on v1, the v1 memory, pids and cpuacct hierarchies. The group is polled
// every 100 ms for the CPU time of the tree; at the end it is read for
// peak memory, the out-of-memory kills and the forks pids.max refused, and
// every process still in it is killed ("killed N lingering processes").
// Groups left by a server that was killed with SIGKILL are reaped by the
// next one. Without cgroups (Options.NoCgroups, or none available) the
// limits are rlimits of each process: RLIMIT_AS for memory and
// RLIMIT_NPROC for processes (counted per host uid: the kernel applies it
// because the command's host uid is never root, see Ownership), and the
// usage is what the kernel reports for the processes
// bubblewrap waited for. In both modes RLIMIT_CPU bounds one process's CPU
// time, RLIMIT_NOFILE its open files, and RLIMIT_FSIZE any single file
// to one byte past the disk limit.
//
// Disk: while the command runs, the work dir is walked (at most every
// 250 ms, and at most a tenth of the time) and its regular files summed
// against the manifest; after it, the scan adds the growth of every file
// that grew. A run past the limit is killed, none of its changes is
// pulled back (ExecResult.Killed "disk limit …"), and the work dir is
// rematerialized from the workspace at once. Paths matching Ignore are
// not counted.
//
// ExecResult says which limits the run had, the mechanism, what it used
// (Usage) and the limit that stopped it (Killed) or refused a request
// (Refused).
//
// # Pull
//
// After the command the paths it changed are compared with the manifest:
// inotify watches on every work-dir directory name them (a directory that
// appeared is read whole), so the cost follows the change, not the
// workspace. When the watcher cannot tell (queue overflow, watch limit,
// no inotify) the whole work dir is walked in parallel, a stat per path;
// watchers are pooled per process and rebuilt for a work dir whose watcher
// was evicted.
// Content is hashed only when the stat moved or was taken within a clock
// tick of a write. Created, modified and deleted files,
// directories and symbolic links, permission bits and file mtimes are
// applied to the workspace, deletions first, then parents before
// children. Host paths are read through os.Root with O_NOFOLLOW and
// symbolic links are copied verbatim (Readlink), so a link planted to a
// host path stays a link and never brings its target's content in.
// Dropped, and reported in ExecResult.Dropped with a reason: changes under
// Options.ReadOnly prefixes, changes whose path the workspace also changed
// while the command ran when Options.OnConflict answers KeepLocal (by
// default the command's state wins), and special files (pipes, sockets).
// The next run restores dropped paths from the workspace. Paths matching
// Options.Ignore (DefaultIgnore: caches) are neither materialized nor
// pulled nor reported; they persist in the work dir between runs. Hard
// links made by the command are pulled as separate files.
//
// The pull-back is atomic: all of a run's changes are applied in one vfs
// batch (vfs.FS.Batch), so they land together (ExecResult.PulledBack) or,
// when the workspace refuses one (quota, disk full, any error), none does:
// the workspace is exactly as before, Changed is empty, Dropped lists
// every change with the reason, PullError says what refused them, ExitCode
// stays the command's, and the work dir returns to the workspace's state.
// A crash during the pull-back leaves the workspace as before the run.
//
// With Options.AutoCheckpoint the workspace is checkpointed (label
// "exec: <command>") before a run's changes are pulled, so the run can be
// rewound; with Options.Audit every run is recorded (tool "exec", argument
// digest, changed paths, the checkpoint, and "exit status N" or "timed
// out" as the outcome).
//
// Concurrency: runs on one work dir are serialised (a mutex shared by
// every Shell on the dir in the process, and a lock file across
// processes); direct writes to the workspace may go on while a command
// runs. Across work dirs, Options.Runs (by default a process-wide Limiter
// of DefaultMaxRuns) bounds the commands running at once; the others
// wait in arrival order (ExecResult.Queued). A request cancelled while it
// waits, for its work dir or for a slot, runs nothing and returns at
// once.
package sandbox
