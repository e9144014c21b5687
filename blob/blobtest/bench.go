package blobtest

import (
	"encoding/binary"
	"testing"

	"github.com/forkspace/forkspace/blob"
	"github.com/forkspace/forkspace/cas"
)

// Benchmark measures Put of new blobs, whole Get and small ranged Get on
// stores from newStore, for 1 MiB blobs (the default chunk size). Hashing
// is outside the timed region.
func Benchmark(b *testing.B, newStore func(b *testing.B) blob.Store) {
	const size = 1 << 20
	b.Run("Put", func(b *testing.B) {
		s := newStore(b)
		defer s.Close()
		_, data := Blob(1, size)
		b.SetBytes(size)
		b.ReportAllocs()
		var n uint64
		for b.Loop() {
			b.StopTimer()
			n++
			binary.LittleEndian.PutUint64(data, n)
			id := cas.Sum(data)
			b.StartTimer()
			if err := s.Put(b.Context(), id, data); err != nil {
				b.Fatal(err)
			}
		}
	})
	get := func(name string, off, length int64, bytes int64) {
		b.Run(name, func(b *testing.B) {
			s := newStore(b)
			defer s.Close()
			const blobs = 16
			ids := make([]cas.Hash, blobs)
			for i := range ids {
				var data []byte
				ids[i], data = Blob(uint64(i), size)
				if err := s.Put(b.Context(), ids[i], data); err != nil {
					b.Fatal(err)
				}
			}
			b.SetBytes(bytes)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				if _, err := s.Get(b.Context(), ids[i%blobs], off, length); err != nil {
					b.Fatal(err)
				}
				i++
			}
		})
	}
	get("GetWhole", 0, -1, size)
	get("GetRange4K", size/2, 4<<10, 4<<10)
}
