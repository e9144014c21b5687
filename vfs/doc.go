// Package vfs is the filesystem of one workspace state over the versioned
// key space: inodes, directory entries, symbolic and hard links, special
// files (FIFOs, sockets, devices: Mknod), extended attributes, file
// handles, quotas, folding and diff.
//
// # States
//
// An FS is either the live head of a workspace (Open: read-write) or a
// read-only view of a tree root (Snapshot: a checkpoint, a fork's parent),
// where every mutation fails with errdefs.ErrReadOnly in a *fs.PathError.
// A live state is the workspace's committed tree root plus its staging
// rows, mirrored in memory by a kv.Overlay; reads use kv.View{root,
// overlay} and never touch SQL beyond tree nodes the kv cache lacks.
//
// # Shared workspaces
//
// With Options.Shared other processes may change the workspace too (a
// store several processes share, docs/decisions/023): every commit that
// changes the state advances the workspace's head generation from the one
// the mirror reflects, so a commit on an out-of-date mirror changes
// nothing; the FS then reloads the head and computes the mutation again
// (shared.go). Notice and CatchUp bring the mirror up to date for reads.
//
// # Mutations
//
// Every mutation validates its input and computes its key mutations under
// the FS write lock, against the state including mutations not yet
// durable; then it is committed in one meta.Update (inline file bodies,
// upload-intent releases and staging rows with increasing Seq), shared with
// the mutations that queued up meanwhile (group commit, commit.go), and
// applied to the overlay readers use. Readers see only durable state. If
// anything fails nothing is visible: bad input changes nothing, and a failed
// transaction fails the mutations computed on top of it too. When a
// mutation returns it is durable (the staging rows are the workspace's
// write-ahead delta; Open reloads them), except under WithDeferredCommit:
// a FUSE mount's creations, removals and attribute changes on open files
// return once queued and commit with the next mutation (a small file's
// creation with its close), before the next read (readers still see only
// durable state; SeeDeferred readers, the mount's own, see them at once),
// at Sync, Fold, Settle and Close, or 10 ms later. Fold (automatic past
// Options.FoldRows staged keys, and before fork/checkpoint through Root)
// folds the staging into a new tree root.
//
// Batch runs many mutations on a filesystem of their own and commits them
// in one transaction at the end, or none of them: imports and the exec
// pull-back use it to land whole or not at all. While a batch runs, other
// writers wait. Its inline bodies are stored ahead of the commit every
// 16 MiB under an upload intent, so its memory does not grow with its
// bytes. Store hashes and stores a file's bytes without any lock (StoreFrom
// streams them from a reader), for WriteStored to name later: bulk writers
// store on several goroutines while one mutates.
//
// # Key space
//
// Keys are documented in keys.go: per inode (big-endian number, so a
// directory's entries are contiguous and name-ordered) attributes,
// secondary hard-link records, content manifest, entries, symlink target
// and xattrs; and one usage record, so forks and checkpoints carry their
// usage. Inode numbers come from the
// store-wide "ino" counter in batches and are never reused; inode 1 is the
// root of every workspace. Attributes keep the inode's primary link (parent
// and name) so an inode maps back to a path (diff) and a directory cannot
// be moved into its own subtree; a file's other hard links have records of
// their own, so removing the primary link promotes another without a scan.
// Check verifies all of these invariants over a whole state.
//
// # Paths and links
//
// Paths are io/fs style ("." is the root, "a/b"), checked by one validator
// (fs.ValidPath rules, no NUL, names up to MaxNameLen, paths up to
// MaxPathLen). CleanPath converts edge input ("/a/b", "a/./b/../c").
// Intermediate symbolic links are always followed; a final one by Stat,
// Open, ReadFile, WriteFile, Chmod, Chown, Chtimes, Truncate and xattr
// calls, not by Lstat, Readlink, Remove, Rename, Symlink or Link. Targets
// resolve inside the workspace (chroot semantics): relative to the link's
// directory, absolute ones from the root, ".." never above the root. More
// than 40 links is errdefs.ErrLoop.
//
// # POSIX details
//
// Directory link counts are 2 + subdirectories; creating, removing or
// renaming an entry sets its directory's mtime and ctime; attribute changes
// set ctime; reads never update atime (noatime). Owners default to 0:0.
//
// # Watching
//
// Watch registers a callback that hears of every change of the state once
// it is durable (Event: the operation, the path it named, and whether a
// whole subtree changed), whichever surface made it: a FUSE mount keeps
// the kernel's caches coherent with it, a change feed publishes it.
//
// # Handles
//
// A *File buffers writes in a content.Draft, putting them to the content
// store every 16 MiB (chunks only, held by upload intents); Sync and Close
// commit them (the chunks synced in one pass, then one meta.Update with
// manifest, size, times and usage). Close survives the death of the
// process; Sync also fsyncs the metadata, so fsync survives a power loss
// (docs/decisions/021). Concurrent handles on one file do
// not see each other's unsynced writes and the last committer wins. A file
// removed while open keeps reading through its handle. A restore (Reset)
// makes every open handle stale (errdefs.ErrStale): nothing written through
// it reaches the restored state. O_TRUNC empties the handle at once and the
// file at the handle's first commit.
//
// A handle whose Write, WriteAt or Truncate failed (quota, storage; not a
// refused argument) is poisoned: the writes it buffered since its last
// successful commit are discarded, and every later write, Sync and Close
// fails with that first error, so the file keeps the contents of its last
// commit (a put over an existing file keeps the old bytes). Whole-file
// writes are atomic: WriteFile and WriteFileFrom (streamed from an
// io.Reader, its bytes put to the content store every 16 MiB as a
// handle's are) replace the contents entirely or change nothing, and a
// refused new file is not created.
//
// # Quotas
//
// Usage is the logical bytes of regular files, counted once per inode, and
// the number of inodes other than the root. A mutation that would pass
// Options.Quota fails with errdefs.ErrQuota and changes nothing; a handle's
// Write that would push the projected usage over fails at Write time (and
// poisons the handle, see Handles), and the commit checks again.
//
// # io/fs and diff
//
// FS methods take a context first; IOFS adapts an FS to fs.FS, ReadDirFS,
// ReadFileFS, StatFS, SubFS and ReadLinkFS. Diff compares any two states
// with kv.Store.Diff, so its work is proportional to the change; its result
// is a script that ApplyDiff applies to a copy of the from state to reach
// the to state (the contract is on Diff).
//
// Concurrency: FS and File are safe for concurrent use. Only one live FS
// may be open for a workspace at a time.
package vfs
