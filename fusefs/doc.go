// Package fusefs mounts workspaces as real directories with FUSE (go-fuse
// v2's fs API, node interfaces found by type assertion): Mount serves one
// workspace state (a live head read-write, a checkpoint or --read-only
// read-only), MountAll every workspace of a store at DIR/<name>/.
//
// # Errors
//
// Errors become errno values here and nowhere else, through one errors.Is
// table (errno.go): fs.ErrNotExist is ENOENT, errdefs.ErrQuota EDQUOT,
// errdefs.ErrReadOnly EROFS, a rename of a directory into its own subtree
// (fs.ErrInvalid) EINVAL, a rename or link between two workspaces EXDEV,
// a missing extended attribute ENODATA, and so on; anything else is EIO,
// logged.
//
// # Semantics
//
// vfs is addressed by path: a node finds its path by walking the kernel's
// tree up to its workspace root. Writes go to a vfs handle, which buffers
// them; close(2) (FUSE flush) commits them, so when close returns the data
// is visible to every other surface and survives the death of the
// daemon, and fsync(2) also waits for the disk, so the data survives a
// power loss (docs/decisions/021). A read sees what other descriptors of
// the file wrote: their writes are committed first. Likewise before a
// descriptor writes, and a descriptor that another's commit (or a
// truncate by path, an open with O_TRUNC) left behind starts over the
// latest contents (coherence.go): two descriptors writing one file, two
// appenders of one log included, never undo each other's writes.
//
// A create, mkdir, symlink or mknod, an unlink or rmdir, and times, owner
// and mode set on any inode (tar sets them on the descriptor before
// closing it, and on each directory at the end) do not wait for
// transactions of their own (vfs.WithDeferredCommit): they commit with
// the next change of the workspace (a small file's creation, attributes
// and bytes with its close, in one transaction), before any other surface
// reads the workspace, at the close of a descriptor open for writing, at
// fsync (of a file or a directory) and at the latest 10 ms later. The
// mount's own requests see them at once (vfs.SeeDeferred). What close or
// fsync acknowledged survives the daemon's death, as before; a change
// followed by none of those may not (as on ext4 until its journal
// commits). docs/decisions/026 and 032.
//
// The mount negotiates FUSE_HANDLE_KILLPRIV_V2 (killpriv.go): it clears
// setuid and setgid on write, truncate, fallocate and chown where Linux
// does, so the kernel asks for fewer attributes. A close of a descriptor
// open for reading only sends no FLUSH (FOPEN_NOFLUSH); locks stay in
// the kernel.
// A file or directory removed (or replaced by a rename) while open lives
// on until its last close: its descriptors read, write, fstat, fchmod,
// fchown and futimens it, with nlink 0, and what one writes the others
// read (orphan.go).
// renameat2(2) supports RENAME_NOREPLACE and RENAME_EXCHANGE. mknod
// makes FIFOs, sockets and devices (vfs.Mknod; the kernel runs them), and
// a virtual mount's entries (dev:) are regular files the daemon serves.
// statfs shows the workspace's quota as the file system's size. Owners
// are the workspace's; Options.UID/GID swap owner 0 with a host user.
// Permission checks are the kernel's (default_permissions).
//
// # Caching and coherence
//
// The kernel caches entries, attributes, symbolic links and pages
// (Options.CacheTimeout, keep_cache). Every change made through another
// surface (the tools, the CLI, a restore, exec, a mount's index) reaches
// the mount's watcher (vfs.FS.Watch) before the change's call returns,
// and invalidates what the kernel holds of it; the mount's own changes
// are skipped.
//
// # Checkpoints
//
// With Options.Checkpoints (MountAll: always), the root of a live
// workspace has a hidden directory, .forkspace (MetaDir): not listed,
// reachable by name unless the workspace has an entry of that name.
// .forkspace/checkpoints/<label>/ shows each checkpoint read-only, looked
// up live and read with no copy.
//
// # Mount points
//
// A mount point must be an empty directory (CheckMountpoint, before
// anything is mounted). Unmount detaches a mount lazily whether its daemon
// is alive or was killed, so no "transport endpoint is not connected"
// stays behind.
package fusefs
