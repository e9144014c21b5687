// Package vfstest is the conformance suite of vfs.FS: every operation, its
// POSIX details and its bad-input cases (each checks the error with
// errors.Is, that it is a *fs.PathError, and that nothing changed), symbolic
// link confinement, rename and hard-link edge cases, extended attributes,
// times, sparse files, handles and testing/fstest.TestFS.
//
// Run it against any way of building a live FS:
//
//	vfstest.Run(t, func(t *testing.T) *vfs.FS { return openFresh(t) })
//
// Dump renders a whole tree for equality checks (before/after a failed
// mutation, a fold, a reopen); State renders it by what vfs.Diff compares
// and vfs.ApplyDiff reproduces, to check that a diff applies.
package vfstest
