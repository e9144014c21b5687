// Package transfer copies file trees between the host and a workspace (any
// *vfs.FS: a live head or a read-only checkpoint view), in six shapes:
// ImportDir, ImportTar and ImportZip write into a workspace, ExportDir,
// ExportTar and ExportZip read out of one. ArchiveFormat tells from a
// destination's name which one to use, and refuses archive formats this
// package does not write rather than treat their names as directories.
//
// # What is preserved
//
// Entry types (regular files, directories, symbolic links), permission bits
// with setuid/setgid/sticky, modification and access times (nanoseconds;
// tar archives are written in PAX format so they keep them), symbolic link
// targets verbatim, hard links (host inodes by device and inode number,
// workspace inodes by vfs.Attr.Ino, tar TypeLink entries), empty
// directories, and extended attributes of files and directories (tar
// carries them as SCHILY.xattr PAX records; only the user.* namespace is
// read from or written to the host, since others need privilege or grant
// it, like security.capability). Owners are recorded on import; export to a directory sets
// them only when the process runs as root, best effort. Workspaces cannot
// set the times or owner of a symbolic link itself (vfs follows the link),
// so those two attributes of links are not carried into a workspace.
// Zip archives keep less: modes, whole-second times and symbolic links
// (the Info-ZIP Unix mode convention), no owners or extended attributes,
// and a hard-linked file is exported once per name. A zip entry's CRC is
// verified to its end; a mismatch refuses the import.
// Devices, FIFOs and sockets are not carried (a workspace holds them, but
// neither direction copies them yet), and sparse tar
// entries are refused (their declared size is not bounded by the
// archive's): Options.Skip decides.
//
// # Safety
//
// Every entry name is checked before anything is written: absolute names,
// ".." elements and hard links to anything this transfer did not write are
// rejected with an error wrapping fs.ErrInvalid, and nothing outside the
// target path is ever written. Writers never follow a symbolic link below
// the target: in a workspace every parent is checked with Lstat and an
// entry that would be written through a link is rejected; on the host every
// directory is opened component by component with O_NOFOLLOW and files are
// created with O_EXCL|O_NOFOLLOW relative to their directory descriptor
// (Linux *at system calls), so a link planted in the destination is never
// traversed. Symbolic links are created with their targets as given; they
// are data, not followed.
//
// # Existing entries
//
// Imports and exports merge into the target: directories are reused, a
// non-directory entry replaces an existing non-directory (it is removed
// first, never written through), and a type clash between a directory and
// anything else fails with fs.ErrExist. Directory modes and times are
// applied after their contents are written, so read-only directories and
// directory mtimes come out as in the source.
//
// # Atomic imports
//
// An import runs in one vfs batch (vfs.FS.Batch): file bytes go to the
// store as they are read, and every entry, the target directory included,
// becomes visible in one metadata transaction at the end. An import that
// fails for any reason (the quota, counted over the whole import; a
// refused entry; a damaged archive; a read error; ctx) leaves the
// workspace exactly as it was, and a crash mid-import leaves nothing of
// it. An import that returned survives a power loss too: its chunks are
// written without waiting for the disk and synced in one pass before that
// transaction, and the transaction is then fsynced (vfs.FS.Sync;
// docs/decisions/021). While an import runs, other writers of the
// workspace wait; readers see the state before it. Exports write to the
// host as they go, a tar stream in 1 MiB writes. An import's memory grows
// with the number of entries (their metadata waits for the commit), not
// with their bytes: large files' chunks go to the blob store as they are
// read, and small (inline) files' bodies are stored ahead of the commit
// every 16 MiB, held from garbage collection by an upload intent until the
// commit names them (vfs.FS.Batch).
//
// # Streaming and progress
//
// Large file contents are streamed through fixed buffers (chunked as they
// are read on the workspace side: vfs.FS.StoreFrom), never read whole into
// memory. Options.Progress, when
// set, is called as entries and bytes complete; with Options.Totals, totals
// are counted by a metadata-only pre-scan for directories and workspaces
// (unknown, -1, without it and for tar streams).
//
// Functions here are safe to call concurrently on different targets; two
// imports into the same workspace run one after the other.
package transfer
