package content_test

import (
	"bytes"
	"testing"

	"github.com/forkspace/forkspace/chunk"
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

// TestCommitAheadStream writes a 40 MiB file in 1 MiB pieces through a
// draft, committing ahead every 16 MiB as a vfs handle does, then commits
// it: every chunk is put once, none is read back, and the manifest is the
// one writing the file whole gives.
func TestCommitAheadStream(t *testing.T) {
	const size, piece, every = 40 << 20, 1 << 20, 16 << 20
	e := newEnv(t, content.Options{})
	data := randomBytes(43, size+piece/3)
	d := e.store.NewDraft(content.Manifest{})
	defer d.Discard()
	for off := 0; off < len(data); off += piece {
		mustWrite(t, d, data[off:min(off+piece, len(data))], int64(off))
		if d.Buffered() >= every {
			m, _, _, err := d.CommitAhead(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if d.Buffered() >= int64(chunk.DefaultParams.MaxSize) || m.Size+d.Buffered() != d.Size() {
				t.Fatalf("commit ahead of %d bytes stored %d, kept %d", d.Size(), m.Size, d.Buffered())
			}
		}
	}
	m := e.commit(t, d)
	puts, gets := e.blobs.puts.Load(), e.blobs.gets.Load()
	whole := e.write(t, data)
	if len(m.Extents) != len(whole.Extents) {
		t.Fatalf("%d chunks, writing whole gives %d", len(m.Extents), len(whole.Extents))
	}
	for i := range m.Extents {
		if m.Extents[i] != whole.Extents[i] {
			t.Fatalf("extent %d: %v, writing whole gives %v", i, m.Extents[i], whole.Extents[i])
		}
	}
	if puts != int64(len(m.Extents)) || gets != 0 {
		t.Fatalf("put %d blobs for %d chunks and read %d back", puts, len(m.Extents), gets)
	}
	if !bytes.Equal(readAll(t, e.reopen(), m), data) {
		t.Fatal("file reads back wrong")
	}
}
