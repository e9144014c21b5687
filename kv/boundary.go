package kv

import (
	"bytes"
	"math/bits"

	"github.com/zeebo/xxh3"
)

// boundaryBits sets the expected fan-out: a key closes a node at level L
// when its hash has at least (L+1)*boundaryBits trailing zero bits, so nodes
// hold 2^boundaryBits = 32 items on average.
const boundaryBits = 5

// rank returns the highest level whose nodes key closes: a node at level L
// ends after an item whose key has rank > L. Because it depends on nothing
// but the key and the store's seed, the shape of a tree is a function of its
// key set alone (history independence), and a change moves boundaries only
// where keys are added or removed.
func rank(seed uint64, key []byte) int {
	return bits.TrailingZeros64(xxh3.HashSeed(key, seed)) / boundaryBits
}

func compare(a, b []byte) int { return bytes.Compare(a, b) }
