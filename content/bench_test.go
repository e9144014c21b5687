package content_test

import (
	"fmt"
	"testing"

	"github.com/forkspace/forkspace/blob"
	"github.com/forkspace/forkspace/blob/fileblob"
	"github.com/forkspace/forkspace/blob/memblob"
	"github.com/forkspace/forkspace/content"
)

// benchStores are the blob stores benchmarks run on: a local directory
// (durable, fsync per chunk) and memory (the CPU cost alone).
var benchStores = []struct {
	name string
	open func(b *testing.B) blob.Store
}{
	{"fileblob", func(b *testing.B) blob.Store {
		s, err := fileblob.Open(b.TempDir())
		if err != nil {
			b.Fatal(err)
		}
		return s
	}},
	{"memblob", func(*testing.B) blob.Store { return memblob.New() }},
}

var benchSizes = []int{64 << 20, 256 << 20}

// BenchmarkWrite stores a whole file of new bytes per iteration.
func BenchmarkWrite(b *testing.B) {
	for _, bs := range benchStores {
		for _, size := range benchSizes {
			b.Run(fmt.Sprintf("%s/%dMiB", bs.name, size>>20), func(b *testing.B) {
				blobs := bs.open(b)
				defer blobs.Close()
				s := content.New(content.Options{Blobs: blobs, Meta: newFakeMeta()})
				data := randomBytes(1, size)
				b.SetBytes(int64(size))
				b.ReportAllocs()
				round := byte(0)
				for b.Loop() {
					b.StopTimer()
					round++
					for i := range data {
						data[i] ^= round
					}
					b.StartTimer()
					if _, _, _, err := s.Write(b.Context(), data); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

// BenchmarkDraftCommit writes a file through a draft in 128 KiB pieces,
// as a FUSE handle does, and commits it.
func BenchmarkDraftCommit(b *testing.B) {
	const size, piece = 64 << 20, 128 << 10
	for _, bs := range benchStores {
		b.Run(bs.name, func(b *testing.B) {
			blobs := bs.open(b)
			defer blobs.Close()
			s := content.New(content.Options{Blobs: blobs, Meta: newFakeMeta()})
			data := randomBytes(2, size)
			b.SetBytes(size)
			b.ReportAllocs()
			round := byte(0)
			for b.Loop() {
				b.StopTimer()
				round++
				for i := range data {
					data[i] ^= round
				}
				b.StartTimer()
				d := s.NewDraft(content.Manifest{})
				for off := 0; off < size; off += piece {
					if _, err := d.WriteAt(data[off:off+piece], int64(off)); err != nil {
						b.Fatal(err)
					}
				}
				if _, _, _, err := d.Commit(b.Context()); err != nil {
					b.Fatal(err)
				}
				d.Discard()
			}
		})
	}
}

// BenchmarkRead reads a whole file sequentially in 1 MiB reads through a
// store with a cold cache each iteration.
func BenchmarkRead(b *testing.B) {
	const buf = 1 << 20
	for _, bs := range benchStores {
		for _, size := range benchSizes {
			b.Run(fmt.Sprintf("%s/%dMiB", bs.name, size>>20), func(b *testing.B) {
				blobs := bs.open(b)
				defer blobs.Close()
				opts := content.Options{Blobs: blobs, Meta: newFakeMeta()}
				m, _, _, err := content.New(opts).Write(b.Context(), randomBytes(3, size))
				if err != nil {
					b.Fatal(err)
				}
				p := make([]byte, buf)
				b.SetBytes(int64(size))
				b.ReportAllocs()
				for b.Loop() {
					s := content.New(opts)
					for off := int64(0); off < m.Size; off += buf {
						if _, err := s.ReadAt(b.Context(), m, p, off); err != nil {
							b.Fatal(err)
						}
					}
				}
			})
		}
	}
}
