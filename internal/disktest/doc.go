// Package disktest gives tests a real file system that fills up: a tmpfs
// of a chosen size, so disk-full paths (ENOSPC from write, SQLITE_FULL
// from SQLite) are exercised against the kernel rather than simulated.
package disktest
