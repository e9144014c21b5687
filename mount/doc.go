// Package mount attaches external content to workspace subtrees: the
// contracts of lazy, eager and virtual mounts, mount options, factories,
// and the conflict hook. The mount table, indexing, hydration of stubs,
// write-back and refresh live beside these contracts; drivers live in
// sub-packages (s3mount, gitmount, hostmount, memmount, bundlemount), and
// mounttest is the conformance suite every driver passes.
package mount
