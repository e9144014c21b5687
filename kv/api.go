package kv

import (
	"context"
	"errors"

	"github.com/forkspace/forkspace/cas"
)

// NodeSource reads immutable tree nodes by hash (meta.Store satisfies it).
// A missing node is fs.ErrNotExist.
type NodeSource interface {
	GetNode(ctx context.Context, h cas.Hash) ([]byte, error)
}

// BatchSource is a NodeSource that also reads many nodes in one request
// (sqlitemeta: one query for up to 64), which walks and diffs use to load
// a level's siblings together.
type BatchSource interface {
	NodeSource
	// GetNodes calls fn with the bytes of each node of hs that exists, in
	// no particular order, each once; missing nodes are skipped. data is
	// fn's to keep.
	GetNodes(ctx context.Context, hs []cas.Hash, fn func(h cas.Hash, data []byte) error) error
}

// Node is an encoded tree node and its content address.
type Node struct {
	Hash cas.Hash
	Data []byte
}

// Mutation sets Key to Value, or deletes Key when Delete is true.
type Mutation struct {
	Key    []byte
	Value  []byte
	Delete bool
}

// Change is one difference between two trees: Old is nil for an added key,
// New is nil for a deleted key.
type Change struct {
	Key, Old, New []byte
}

// Stop may be returned by a Scan or Diff callback to end the walk early
// without error.
var Stop = errors.New("stop")

// Options configure a Store. The zero value is usable.
type Options struct {
	// Seed keys the hash that places node boundaries. A store records its
	// seed once; trees built with different seeds are not comparable.
	Seed uint64
	// CacheBytes bounds the decoded-node cache (default 64 MiB).
	CacheBytes int64
}
