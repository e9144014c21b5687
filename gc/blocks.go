package gc

import "iter"

// blocks is an append-only sequence held in blocks that double in size up
// to maxBlock values, so that it grows without copying what it holds: a
// plan of a million objects gathers a million chunk references and a
// million listed blob addresses, and a slice would copy each several
// times as it grew (into fresh memory the kernel must fault in).
type blocks[T any] [][]T

// Block sizes: the first holds minBlock values, each next one twice as
// many, up to maxBlock.
const (
	minBlock = 256
	maxBlock = 1 << 16
)

// add appends v.
func (b *blocks[T]) add(v T) {
	n := len(*b)
	if n == 0 || len((*b)[n-1]) == cap((*b)[n-1]) {
		size := minBlock
		if n > 0 {
			size = min(2*cap((*b)[n-1]), maxBlock)
		}
		*b = append(*b, make([]T, 0, size))
		n++
	}
	(*b)[n-1] = append((*b)[n-1], v)
}

// len returns the number of values.
func (b blocks[T]) len() int {
	n := 0
	for _, blk := range b {
		n += len(blk)
	}
	return n
}

// all yields the values in the order they were added.
func (b blocks[T]) all() iter.Seq[T] {
	return func(yield func(T) bool) {
		for _, blk := range b {
			for _, v := range blk {
				if !yield(v) {
					return
				}
			}
		}
	}
}
