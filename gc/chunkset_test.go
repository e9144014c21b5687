package gc

import (
	"bytes"
	"slices"
	"testing"

	"pgregory.net/rapid"

	"github.com/forkspace/forkspace/cas"
)

// TestChunkSet: a sealed chunkSet holds each added chunk once, in address
// order, with its size, and has finds exactly the added chunks, whatever
// their number (from none to many per bucket) and their repeats; chunks
// that share leading bytes share a bucket.
func TestChunkSet(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		n := rapid.IntRange(0, 3000).Draw(t, "n")
		prefix := rapid.IntRange(0, 4).Draw(t, "shared leading bytes")
		var s chunkSet
		want := map[cas.Hash]int64{}
		var added []cas.Hash
		for i := range n {
			h := cas.Sum([]byte{byte(i), byte(i >> 8)})
			copy(h[:prefix], "\xab\xcd\xef\x01")
			if len(added) > 0 && rapid.Bool().Draw(t, "repeat") {
				h = added[rapid.IntRange(0, len(added)-1).Draw(t, "which")]
			}
			added = append(added, h)
			want[h] = int64(h[31])
			s.add(h, int64(h[31]))
		}
		s.seal()
		if s.len() != len(want) {
			t.Fatalf("%d chunks, want %d", s.len(), len(want))
		}
		if !slices.IsSortedFunc(s.refs, func(x, y chunkRef) int { return bytes.Compare(x.hash[:], y.hash[:]) }) {
			t.Fatal("chunks not in address order")
		}
		for _, r := range s.refs {
			if size, ok := want[r.hash]; !ok || size != r.size || !s.has(r.hash) {
				t.Fatalf("chunk %s: size %d, want %d (added: %v)", r.hash.Short(), r.size, size, ok)
			}
		}
		for i := range 100 {
			h := cas.Sum([]byte{byte(i), byte(i >> 8), 'x'})
			if _, ok := want[h]; s.has(h) != ok {
				t.Fatalf("has(%s) = %v, want %v", h.Short(), !ok, ok)
			}
		}
	})
}
