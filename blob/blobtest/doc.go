// Package blobtest is the conformance suite of the blob.Store contract.
// Every driver's tests call Run with a constructor of fresh, empty stores,
// RunCorruption when the driver can damage a stored blob on purpose, and
// Benchmark from a Benchmark function:
//
//	func TestConformance(t *testing.T) {
//		blobtest.Run(t, func(t *testing.T) blob.Store { return newStore(t) })
//	}
//
// The suite closes the stores it gets; constructors need not.
package blobtest
