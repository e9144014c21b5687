// Package kv is forkspace's versioned key space: persistent, copy-on-write
// search trees of content-addressed immutable nodes, an in-memory staging
// overlay, and structural diff.
//
// # Trees
//
// A tree maps byte-string keys to byte-string values. Leaves hold entries;
// internal nodes hold, for each child, its largest key and hash. A node is
// named by the BLAKE3 hash of its canonical encoding and never changes, so
// any number of workspaces, forks and checkpoints share a tree by holding its
// root hash: a fork or a checkpoint copies one hash.
//
// Node boundaries are content-defined from the keys alone (rank): a node at
// level L ends after an item whose keyed xxh3 hash has more than L*5 trailing
// zero bits, giving a fan-out of 32 on average. The shape of a tree is
// therefore a function of its contents, not of the order of the edits that
// produced it (history independence), which makes two trees that share most
// of their contents share most of their nodes. Diff exploits that: it skips
// every pair of subtrees with equal hashes and re-aligns on the next shared
// node, so its cost follows the number of changes, not the size of the tree.
// The hash is keyed by a per-store seed, so file names chosen to avoid
// boundaries cannot be precomputed.
//
// # Reading nodes
//
// Nodes come from a NodeSource, one by one, or a level's siblings in one
// request from a BatchSource (sqlitemeta): Walk reads a tree level by
// level, Diff reads the subtrees it expands together, and a View's diff
// reads the paths of the keys its overlays stage a level at a time
// before looking them up, so a diff in a freshly opened store (an empty
// node cache) pays a request per level, not per node.
//
// Apply writes a batch of mutations by walking only the paths they touch,
// reusing every untouched subtree whole; it returns the new nodes for the
// caller to persist before publishing the new root.
//
// # Staging
//
// Overlay holds a workspace's recent mutations (the mirror of its durable
// staging rows) in key order with sequence numbers; View reads a root with
// an overlay on top. Folding is Apply(root, overlay.Mutations()) followed by
// Drop of the folded sequence numbers.
//
// # Encoding
//
// A node is: format byte (1), level byte, uvarint item count, then per item
// the uvarint length of the prefix shared with the previous key, the uvarint
// length and bytes of the rest of the key, and either the uvarint length and
// bytes of the value (leaf) or the 32-byte child hash (internal). The
// decoder accepts only canonical encodings (minimal varints, maximal shared
// prefixes, strictly ascending keys) and reports anything else as
// errdefs.ErrCorrupt; loads verify each node against its hash.
package kv
