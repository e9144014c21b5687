// Package tmpfile creates the unlinked temporary files that hold what
// would otherwise grow in memory: a handle's spilled writes (Unlinked),
// and, appended to a Log, a batch's changed paths and a transfer's
// written names.
package tmpfile
