// Package hostmount is a lazy mount of a host directory, confined to it
// with os.Root: ".." never climbs out, symbolic links resolve only inside
// the directory (an escaping link fails to fetch), and a regular file with
// more than one hard link is refused (it may be an outside file linked in),
// so nothing outside the directory is ever read or written.
//
// Versions are "size-mtimeNs". Put writes a temporary file and renames it
// over the target (so a hard link is replaced, never written through) and
// checks ifVersion first (best effort: a concurrent host writer between
// the check and the rename wins). A Dir is safe for concurrent use.
package hostmount
