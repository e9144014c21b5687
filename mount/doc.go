// Package mount attaches external content to workspace subtrees.
//
// Contracts (mount.go): a Mount is Lazy (List, Fetch), Eager (Materialize
// through a WriteAPI) or Virtual (served live: Stat, ReadDir, ReadFile),
// optionally Writable (Put with a version precondition, Delete) or a
// VirtualWriter. Drivers live in sub-packages (hostmount, memmount,
// devmount, bundlemount, s3mount, gitmount); mounttest is the conformance
// suite every driver passes.
//
// A Table (NewTable) is a workspace's validated mount table: absolute,
// clean, non-nested roots, options with defaults. It answers the Policy
// questions (ReadOnly, Writable, Ignored) a command runner asks. ParseURL
// and ParseSpec build mounts from URLs through an explicit Drivers map and
// return the source to persist, without credentials.
//
// A Manager (Attach) runs one workspace's table as the vfs.FS's hooks:
//
//   - the first operation indexes every mount in parallel: a lazy listing
//     becomes stubs (size, mode, mtime known; a hole manifest that
//     references nothing stored), an eager mount is materialized; caps are
//     checked first and everything lands in one mutation, so a failed index
//     leaves nothing. The index record and per-file versions are xattrs in
//     the tree, so a reopen does not re-list and forks and checkpoints carry
//     them;
//   - the first read of a stub fetches it once (shared by concurrent
//     readers) and promotes it to ordinary content (Prefetch does it ahead);
//   - virtual mounts are dispatched by longest root;
//   - writes under a read-only mount fail with errdefs.ErrReadOnly; under a
//     read-write one they mark the path for write-back, debounced per path
//     or manual, persisted across restarts, flushed as the path's final
//     state (Put with the last seen version, Delete when gone), conflicts
//     reported to the ConflictHook;
//   - in a fork (a workspace reading an index another one made) read-write
//     mounts are local-only unless Options.ForkWriteBack.
//
// docs/mounts.md describes the design and its decisions. All exported
// functions and the Manager are safe for concurrent use.
package mount
