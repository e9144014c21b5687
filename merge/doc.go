// Package merge holds the pure parts of a three-way merge: Text merges
// the contents of a text file line by line with diff3 semantics, and the
// conflict kinds name what a merge could not merge. The store-side merge
// (bases, trees, conflicts as rows) is in the root package.
package merge
