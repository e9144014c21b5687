// Package webdavfs serves a store's workspaces over WebDAV (RFC 4918), so
// a workspace mounts on a desktop (Finder, Explorer, GNOME Files, davfs2)
// or syncs with any WebDAV client, without FUSE. The protocol is
// golang.org/x/net/webdav's; this package is its FileSystem over the
// store, plus the edges that handler leaves open
// (docs/decisions/015-protocol-doors.md).
//
// # Namespace
//
//	/                      the workspaces (a read-only collection; hidden:
//	                       checkpoints)
//	/NAME/PATH             PATH in workspace NAME, read-write
//	/NAME@CHECKPOINT/PATH  PATH in a checkpoint (ID or label), read-only
//
// MKCOL /NAME creates a workspace. Workspaces are not deleted, moved or
// renamed through WebDAV (403): that stays with the CLI, the API and the
// tools, where it can be checkpointed and confirmed. A MOVE between two
// workspaces is refused with 502 (RFC 4918's answer for a destination
// another server holds); COPY between them works.
//
// # Writes
//
// Every mutation goes through a forkspace.Audited handle with surface
// "webdav", so it is in the audit log beside the tools' calls. A PUT is a
// whole-file write (vfs.FS.WriteFileFrom): the body streams to the blob
// store and the file is replaced when it has arrived whole; an upload cut
// off midway, refused for quota (507 Insufficient Storage) or failing in
// any other way leaves the previous contents, or no file. Writes to a
// checkpoint — PUT, DELETE, MKCOL, MOVE, COPY into it, PROPPATCH, LOCK —
// are refused with 403 before anything runs.
//
// Dead properties (PROPPATCH) are extended attributes of the entry, named
// "user.dav." plus a digest of the property's name, so they fork,
// checkpoint and diff with it. Locks are held in memory by the server
// (webdav.NewMemLS) and last as long as it runs.
//
// # Tokens
//
// Behind httpapi.Authenticate, a request carries its token's scope: the
// handler checks read on the workspace of its path (write for writing
// methods, and on the Destination of COPY and MOVE) before anything else
// (404 for a workspace outside the token, as a missing one; 403 for a
// permission it lacks), and the root lists only the token's workspaces.
//
// # Errors
//
// Store errors are mapped here and only here: the file system hands the
// handler plain os-style errors it understands (fs.ErrNotExist,
// fs.ErrExist, fs.ErrPermission), and the status the handler chose is
// corrected from the cause (quota 507, read-only 403, busy 503, a move
// across workspaces 502) with the message in the body.
package webdavfs
