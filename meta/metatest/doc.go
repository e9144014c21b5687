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
// against a map model), snapshot isolation of View, all-or-nothing Update
// under concurrency (group commit), the database clock and Close. RunReopen
// checks that a store that persists keeps everything across Close and
// Open, and the Benchmark functions measure the hot paths.
//
// Suite functions never call t.Fatal from inside a View or Update function
// (a driver may run it on another goroutine); they return errors instead.
package metatest
