package content_test

import (
	"bytes"
	"testing"

	"github.com/forkspace/forkspace/content"
)

// TestCommitReuse edits a 64 MiB file with default parameters and counts
// blob puts and gets: a small edit re-puts and re-reads about one chunk.
func TestCommitReuse(t *testing.T) {
	const size = 64 << 20
	e := newEnv(t, content.Options{})
	data := randomBytes(42, size)
	base := e.write(t, data)
	chunks := int64(len(base.Extents))
	if got := e.blobs.puts.Load(); got != chunks {
		t.Fatalf("initial write put %d blobs for %d chunks", got, chunks)
	}
	tests := []struct {
		name string
		edit func(d *content.Draft, want []byte) []byte
		// most puts and gets the commit may need
		puts, gets int64
	}{
		{"overwrite one byte", func(d *content.Draft, want []byte) []byte {
			mustWrite(t, d, []byte{^want[size/2]}, size/2)
			want[size/2] ^= 0xff
			return want
		}, 2, 3},
		{"overwrite first byte", func(d *content.Draft, want []byte) []byte {
			mustWrite(t, d, []byte{^want[0]}, 0)
			want[0] ^= 0xff
			return want
		}, 2, 3},
		{"append", func(d *content.Draft, want []byte) []byte {
			tail := randomBytes(7, 1000)
			mustWrite(t, d, tail, size)
			return append(want, tail...)
		}, 2, 2},
		{"truncate", func(d *content.Draft, want []byte) []byte {
			if err := d.Truncate(size - 1000); err != nil {
				t.Fatal(err)
			}
			return want[:size-1000]
		}, 2, 2},
		{"two edits far apart", func(d *content.Draft, want []byte) []byte {
			for _, off := range []int64{size / 4, 3 * size / 4} {
				mustWrite(t, d, []byte("edit"), off)
				copy(want[off:], "edit")
			}
			return want
		}, 4, 6},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			d := e.store.NewDraft(base)
			want := tt.edit(d, bytes.Clone(data))
			cold := e.reopen()
			d = cold.NewDraft(base)
			tt.edit(d, bytes.Clone(data))
			puts, gets := e.blobs.puts.Load(), e.blobs.gets.Load()
			m := e.commit(t, d)
			puts, gets = e.blobs.puts.Load()-puts, e.blobs.gets.Load()-gets
			t.Logf("%d of %d chunks put, %d read", puts, len(m.Extents), gets)
			if puts < 1 || puts > tt.puts || gets > tt.gets {
				t.Fatalf("commit put %d and read %d chunks of %d, want at most %d and %d", puts, gets, len(m.Extents), tt.puts, tt.gets)
			}
			if !bytes.Equal(readAll(t, e.reopen(), m), want) {
				t.Fatal("edited file reads back wrong")
			}
		})
	}
}
