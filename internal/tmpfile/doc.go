// Package tmpfile creates the unlinked temporary files that hold what
// would otherwise grow in memory: a handle's spilled writes, a batch's
// changed paths, a transfer's written names.
package tmpfile
