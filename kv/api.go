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
