package gc

import (
	"slices"
	"testing"
)

// TestBlocks: blocks yields what was added, in order, across blocks of
// growing size, and stops when its consumer does.
func TestBlocks(t *testing.T) {
	for _, n := range []int{0, 1, minBlock, minBlock + 1, 3*maxBlock + 5} {
		var b blocks[int]
		for i := range n {
			b.add(i)
		}
		got := slices.Collect(b.all())
		if b.len() != n || len(got) != n || !slices.Equal(got, rangeTo(n)) {
			t.Fatalf("%d added: len %d, %d yielded", n, b.len(), len(got))
		}
		for range b.all() {
			break
		}
	}
}

func rangeTo(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}
