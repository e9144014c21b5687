package content_test

import (
	"bytes"
	"errors"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/forkspace/forkspace/blob"
	"github.com/forkspace/forkspace/blob/fileblob"
	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/chunk"
	"github.com/forkspace/forkspace/content"
	"github.com/forkspace/forkspace/errdefs"
)

func TestOptions(t *testing.T) {
	blobs, meta := &countingBlobs{}, newFakeMeta()
	tests := []struct {
		name string
		opts content.Options
		ok   bool
	}{
		{"defaults", content.Options{Blobs: blobs, Meta: meta}, true},
		{"largest inline", content.Options{Blobs: blobs, Meta: meta, InlineMax: content.MaxInlineMax}, true},
		{"inline too large", content.Options{Blobs: blobs, Meta: meta, InlineMax: content.MaxInlineMax + 1}, false},
		{"negative inline", content.Options{Blobs: blobs, Meta: meta, InlineMax: -1}, false},
		{"negative cache", content.Options{Blobs: blobs, Meta: meta, CacheBytes: -1}, false},
		{"bad params", content.Options{Blobs: blobs, Meta: meta, Params: chunk.Params{MinSize: 1, AvgSize: 2, MaxSize: 3}}, false},
		{"no blobs", content.Options{Meta: meta}, false},
		{"no meta", content.Options{Blobs: blobs}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.opts.Validate()
			if tt.ok != (err == nil) {
				t.Fatalf("Validate = %v, want ok=%v", err, tt.ok)
			}
			if tt.ok {
				return
			}
			if !errors.Is(err, fs.ErrInvalid) {
				t.Fatalf("Validate = %v, want fs.ErrInvalid", err)
			}
			s := content.New(tt.opts)
			if _, _, _, err := s.Write(t.Context(), []byte("x")); !errors.Is(err, fs.ErrInvalid) {
				t.Fatalf("Write on invalid store = %v, want fs.ErrInvalid", err)
			}
			if _, err := s.ReadAt(t.Context(), content.Manifest{}, nil, 0); !errors.Is(err, fs.ErrInvalid) {
				t.Fatalf("ReadAt on invalid store = %v, want fs.ErrInvalid", err)
			}
			d := s.NewDraft(content.Manifest{Size: 3, Extents: []content.Extent{{Size: 3}}})
			if _, err := d.ReadAt(t.Context(), make([]byte, 3), 0); !errors.Is(err, fs.ErrInvalid) {
				t.Fatalf("draft ReadAt on invalid store = %v, want fs.ErrInvalid", err)
			}
		})
	}
}

func TestWriteRead(t *testing.T) {
	e := newEnv(t, content.Options{Params: small, InlineMax: 100})
	for _, n := range []int{0, 1, 100, 101, 1024, 10_000, 100_000} {
		data := randomBytes(uint64(n), n)
		m := e.write(t, data)
		switch {
		case n == 0 && (m.Inline || len(m.Extents) != 0):
			t.Fatalf("empty file: manifest %+v", m)
		case n > 0 && n <= 100 && !m.Inline:
			t.Fatalf("%d bytes not inline", n)
		case n > 100 && m.Inline:
			t.Fatalf("%d bytes inline", n)
		}
		for _, s := range []*content.Store{e.store, e.reopen()} {
			if got := readAll(t, s, m); !bytes.Equal(got, data) {
				t.Fatalf("%d bytes: read back differs", n)
			}
		}
		// Partial reads, including across the end.
		s := e.reopen()
		for _, r := range []struct{ off, n int64 }{{0, 1}, {int64(n) / 3, 500}, {int64(n) - 1, 10}} {
			if r.off < 0 || r.off >= int64(n) {
				continue
			}
			buf := make([]byte, r.n)
			got, err := s.ReadAt(t.Context(), m, buf, r.off)
			want := min(r.n, int64(n)-r.off)
			if int64(got) != want || (want < r.n) != errors.Is(err, io.EOF) || (err != nil && !errors.Is(err, io.EOF)) {
				t.Fatalf("read [%d,+%d) of %d: %d, %v", r.off, r.n, n, got, err)
			}
			if !bytes.Equal(buf[:got], data[r.off:r.off+want]) {
				t.Fatalf("read [%d,+%d) of %d: wrong bytes", r.off, r.n, n)
			}
		}
		if _, err := s.ReadAt(t.Context(), m, make([]byte, 1), int64(n)); !errors.Is(err, io.EOF) {
			t.Fatalf("read at end: %v, want io.EOF", err)
		}
		if _, err := s.ReadAt(t.Context(), m, make([]byte, 1), -1); !errors.Is(err, fs.ErrInvalid) {
			t.Fatalf("read at -1: %v, want fs.ErrInvalid", err)
		}
	}
}

// TestDedup writes the same bytes twice, and inside one file, and checks
// each chunk is stored once.
func TestDedup(t *testing.T) {
	e := newEnv(t, content.Options{Params: small})
	half := randomBytes(1, 50_000)
	data := append(bytes.Clone(half), half...)
	m1 := e.write(t, data)
	m2 := e.write(t, data)
	if len(m1.Extents) != len(m2.Extents) {
		t.Fatalf("same bytes, different manifests")
	}
	distinct := map[cas.Hash]bool{}
	for _, x := range m1.Extents {
		distinct[x.Hash] = true
	}
	if len(distinct) > len(m1.Extents)/2+3 {
		t.Fatalf("%d distinct chunks in %d: the repeated half was not deduplicated", len(distinct), len(m1.Extents))
	}
	stored := 0
	if err := e.blobs.List(t.Context(), func(blob.Info) error { stored++; return nil }); err != nil {
		t.Fatal(err)
	}
	if stored != len(distinct) {
		t.Fatalf("blob store holds %d blobs, want %d distinct chunks", stored, len(distinct))
	}
}

func TestHoles(t *testing.T) {
	e := newEnv(t, content.Options{Params: small, InlineMax: 100})
	d := e.store.NewDraft(content.Manifest{})
	head, tail := randomBytes(1, 300), randomBytes(2, 300)
	mustWrite(t, d, head, 0)
	mustWrite(t, d, tail, 100_000)
	if err := d.Truncate(200_000); err != nil {
		t.Fatal(err)
	}
	m := e.commit(t, d)
	want := make([]byte, 200_000)
	copy(want, head)
	copy(want[100_000:], tail)
	if got := readAll(t, e.reopen(), m); !bytes.Equal(got, want) {
		t.Fatal("sparse file reads back wrong")
	}
	var holes, data int64
	for _, x := range m.Extents {
		if x.Hash.IsZero() {
			holes += x.Size
		} else {
			data += x.Size
		}
	}
	if data != 600 || holes != 200_000-600 {
		t.Fatalf("manifest has %d data and %d hole bytes, want 600 and %d: %+v", data, holes, 200_000-600, m.Extents)
	}

	// Writing into a hole keeps the rest of it a hole.
	d = e.store.NewDraft(m)
	mustWrite(t, d, tail, 50_000)
	copy(want[50_000:], tail)
	m = e.commit(t, d)
	if got := readAll(t, e.reopen(), m); !bytes.Equal(got, want) {
		t.Fatal("write into hole reads back wrong")
	}
	holes = 0
	for _, x := range m.Extents {
		if x.Hash.IsZero() {
			holes += x.Size
		}
	}
	if holes != 200_000-900 {
		t.Fatalf("after writing into the hole, %d hole bytes, want %d", holes, 200_000-900)
	}
}

func mustWrite(t fataler, d *content.Draft, p []byte, off int64) {
	t.Helper()
	if n, err := d.WriteAt(p, off); err != nil || n != len(p) {
		t.Fatalf("write %d bytes at %d: %d, %v", len(p), off, n, err)
	}
}

func TestCorruptChunk(t *testing.T) {
	dir := t.TempDir()
	fb, err := fileblob.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer fb.Close()
	meta := newFakeMeta()
	opts := content.Options{Blobs: fb, Meta: meta, Params: small}
	m, _, _, err := content.New(opts).Write(t.Context(), randomBytes(3, 20_000))
	if err != nil {
		t.Fatal(err)
	}
	victim := m.Extents[len(m.Extents)/2]
	path := fb.Path(victim.Hash)
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	b[0] ^= 0xff
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	s := content.New(opts)
	if _, err := s.ReadAt(t.Context(), m, make([]byte, m.Size), 0); !errors.Is(err, errdefs.ErrCorrupt) {
		t.Fatalf("read of a file with a damaged chunk: %v, want errdefs.ErrCorrupt", err)
	}
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
	// A missing chunk is damage too (issue 12): not "no such file", and
	// never the blob's host path.
	_, err = s.ReadAt(t.Context(), m, make([]byte, m.Size), 0)
	if !errors.Is(err, errdefs.ErrCorrupt) || errors.Is(err, fs.ErrNotExist) || strings.Contains(err.Error(), dir) {
		t.Fatalf("read of a file with a missing chunk: %v, want errdefs.ErrCorrupt without the path", err)
	}
}

func TestCorruptInline(t *testing.T) {
	e := newEnv(t, content.Options{})
	m := e.write(t, []byte("hello, inline"))
	e.meta.bodies[m.Extents[0].Hash] = []byte("hello, INLINE")
	if _, err := e.reopen().ReadAt(t.Context(), m, make([]byte, m.Size), 0); !errors.Is(err, errdefs.ErrCorrupt) {
		t.Fatalf("read of a damaged inline body: %v, want errdefs.ErrCorrupt", err)
	}
	// A manifest whose sizes disagree with the stored bytes is corrupt too.
	bad := content.Manifest{Size: 5, Inline: true, Extents: []content.Extent{{Hash: cas.Sum([]byte("hello, INLINE")), Size: 5}}}
	e.meta.bodies[bad.Extents[0].Hash] = []byte("hello, INLINE")
	if _, err := e.reopen().ReadAt(t.Context(), bad, make([]byte, 5), 0); !errors.Is(err, errdefs.ErrCorrupt) {
		t.Fatalf("read with a wrong extent size: %v, want errdefs.ErrCorrupt", err)
	}
}

func TestDraftErrors(t *testing.T) {
	e := newEnv(t, content.Options{})
	d := e.store.NewDraft(content.Manifest{})
	if _, err := d.WriteAt([]byte("x"), -1); !errors.Is(err, fs.ErrInvalid) {
		t.Fatalf("write at -1: %v", err)
	}
	if err := d.Truncate(-1); !errors.Is(err, fs.ErrInvalid) {
		t.Fatalf("truncate to -1: %v", err)
	}
	if _, err := d.ReadAt(t.Context(), make([]byte, 1), -1); !errors.Is(err, fs.ErrInvalid) {
		t.Fatalf("read at -1: %v", err)
	}
	if d.Dirty() {
		t.Fatal("failed operations dirtied the draft")
	}
	m, inline, _, err := d.Commit(t.Context())
	if err != nil || m.Size != 0 || inline != nil {
		t.Fatalf("commit of a clean draft: %+v, %v, %v", m, inline, err)
	}
	d.Discard()
	d.Discard()
	if _, err := d.WriteAt([]byte("x"), 0); !errors.Is(err, fs.ErrClosed) {
		t.Fatalf("write after discard: %v", err)
	}
	if _, _, _, err := d.Commit(t.Context()); !errors.Is(err, fs.ErrClosed) {
		t.Fatalf("commit after discard: %v", err)
	}
}

// TestSpill writes drafts in memory, across memory blocks and spilled to a
// temp file, overwriting parts, and reads them back before and after
// commit.
func TestSpill(t *testing.T) {
	tests := []struct {
		name         string
		spill        int64
		size, pieces int
	}{
		{"spilled small", 4096, 50_000, 1000},
		{"memory blocks", 0, 3<<20 + 5, 100_003},
		{"spilled blocks", 3 << 19, 3<<20 + 5, 100_003},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEnv(t, content.Options{Params: small, SpillBytes: tt.spill})
			d := e.store.NewDraft(content.Manifest{})
			want := randomBytes(4, tt.size)
			for off := 0; off < len(want); off += tt.pieces {
				mustWrite(t, d, want[off:min(off+tt.pieces, len(want))], int64(off))
			}
			patch := randomBytes(5, 3000)
			mustWrite(t, d, patch, 20_500)
			copy(want[20_500:], patch)
			got := make([]byte, len(want))
			if _, err := d.ReadAt(t.Context(), got, 0); err != nil || !bytes.Equal(got, want) {
				t.Fatalf("draft read: %v", err)
			}
			m := e.commit(t, d)
			if !bytes.Equal(readAll(t, e.reopen(), m), want) {
				t.Fatal("committed draft reads back wrong")
			}
		})
	}
}

// TestInconsistentManifest hands the store manifests whose extents do not
// add up; reads and drafts over them fail with errdefs.ErrCorrupt.
func TestInconsistentManifest(t *testing.T) {
	e := newEnv(t, content.Options{Params: small})
	h := cas.Sum([]byte("x"))
	for _, m := range []content.Manifest{
		{Size: 100},
		{Size: 100, Extents: []content.Extent{{Hash: h, Size: 50}}},
		{Size: 100, Extents: []content.Extent{{Hash: h, Size: 150}}},
		{Size: 100, Extents: []content.Extent{{Hash: h, Size: 0}, {Hash: h, Size: 100}}},
		{Size: 100, Inline: true, Extents: []content.Extent{{Size: 100}}},
	} {
		if _, err := e.store.ReadAt(t.Context(), m, make([]byte, 10), 0); !errors.Is(err, errdefs.ErrCorrupt) {
			t.Fatalf("read of %+v: %v, want errdefs.ErrCorrupt", m, err)
		}
		d := e.store.NewDraft(m)
		if _, err := d.ReadAt(t.Context(), make([]byte, 10), 0); !errors.Is(err, errdefs.ErrCorrupt) {
			t.Fatalf("draft read over %+v: %v, want errdefs.ErrCorrupt", m, err)
		}
		mustWrite(t, d, []byte("x"), 0)
		if _, _, _, err := d.Commit(t.Context()); !errors.Is(err, errdefs.ErrCorrupt) {
			t.Fatalf("commit over %+v: %v, want errdefs.ErrCorrupt", m, err)
		}
	}
}

// TestConcurrentReads reads one file from many goroutines through a cache
// too small to hold it, so fetches, read-ahead and eviction interleave.
func TestConcurrentReads(t *testing.T) {
	e := newEnv(t, content.Options{Params: small, CacheBytes: 8 << 10})
	data := randomBytes(9, 200_000)
	m := e.write(t, data)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(g), 0))
			for range 200 {
				off := r.IntN(len(data))
				n := 1 + r.IntN(min(5000, len(data)-off))
				buf := make([]byte, n)
				if _, err := e.store.ReadAt(t.Context(), m, buf, int64(off)); err != nil {
					t.Errorf("read [%d,+%d): %v", off, n, err)
					return
				}
				if !bytes.Equal(buf, data[off:off+n]) {
					t.Errorf("read [%d,+%d): wrong bytes", off, n)
					return
				}
			}
		})
	}
	wg.Wait()
}
