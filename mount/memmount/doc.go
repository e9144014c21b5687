// Package memmount is a virtual mount over an in-memory file set (a host
// program's tools, uploads or libraries): served live on every access,
// never persisted, not exported, not collected, not counted in quotas, and
// shared by reference with forks (a write through a read-write mount is
// seen by every workspace that mounts the same *FS).
//
// Directories are implied by file paths ("lib/a.py" implies "lib"). An FS
// is safe for concurrent use.
package memmount
