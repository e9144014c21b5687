// Package secrettest checks that credentials did not reach the disk: it
// scans every regular file under a directory (a store's SQLite database and
// its WAL, blob files, repositories) for the bytes of each secret.
package secrettest
