// Package metatest is the conformance suite of the meta.Store contract.
// Every driver's tests call it against a real store:
//
//	func TestConformance(t *testing.T) {
//		metatest.Run(t, func(t *testing.T) meta.Store { return openTemp(t) })
//	}
//
// Run covers each clause of meta.Store and meta.Tx: settings, counters
// (including concurrent allocation), immutable nodes and inline bodies, the
// workspace catalog, checkpoints, staging rows (also as a property test
// against a map model with pgregory.net/rapid), the audit log (Seq order,
// database-clock times, every filter, rollback), snapshot isolation of View,
// all-or-nothing Update under concurrency (group commit: failing, erring and
// panicking functions mixed with successful ones), the database clock and
// Close racing reads and writes. It also pins down what the contract leaves
// open, the same way for every driver: an empty ID or name and a
// non-positive Allocate are fs.ErrInvalid, SetRoot/SetQuota/Delete* of a
// missing row are fs.ErrNotExist, writes in a View are errdefs.ErrReadOnly,
// Update with a done context does not run fn, a panic in fn reaches the
// caller, an empty staged Value reads back as nil, and a zero CreatedAt of a
// checkpoint is set from the database clock.
//
// RunReopen checks that a persistent store keeps everything, counters
// included, across Close and Open. BenchmarkUpdate, BenchmarkUpdateParallel
// (8 callers), BenchmarkGetNode, BenchmarkStaged and BenchmarkView measure
// the hot paths; a driver's benchmark functions call them.
//
// Suite functions never call t.Fatal from inside a View or Update function
// (a driver may run it on another goroutine); they return errors instead.
package metatest
