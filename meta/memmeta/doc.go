// Package memmeta is an in-memory meta.Store: the reference driver that
// states the contract in plain Go, and a store for tests that need no file.
// It passes the same conformance suite (metatest) as sqlitemeta.
//
// The database is an immutable snapshot behind an atomic pointer. View reads
// the current snapshot, so it never waits and never sees a later commit.
// Update runs fn under one mutex on a copy-on-write successor (each table is
// copied on its first write in that Update) and publishes it only when fn
// returns nil; a failing or panicking fn leaves nothing behind. Nothing
// survives Close.
//
// Copying a table costs O(its rows) per Update that writes it (a
// workspace's staging rows are a table of their own), so memmeta suits
// tests and small stores; it is a reference, not a fast path.
package memmeta
