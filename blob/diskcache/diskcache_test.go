package diskcache_test

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/forkspace/forkspace/blob"
	"github.com/forkspace/forkspace/blob/blobtest"
	"github.com/forkspace/forkspace/blob/diskcache"
	"github.com/forkspace/forkspace/blob/memblob"
	"github.com/forkspace/forkspace/cas"
)

func open(t *testing.T, dir string, max int64) *diskcache.Cache {
	t.Helper()
	c, err := diskcache.Open(dir, max)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestConformance(t *testing.T) {
	blobtest.Run(t, func(t *testing.T) blob.Store {
		return diskcache.Wrap(memblob.New(), open(t, t.TempDir(), 64<<20))
	})
}

// counting counts the reads that reach the store.
type counting struct {
	blob.Store
	gets int
}

func (c *counting) Get(ctx context.Context, id cas.Hash, off, length int64) ([]byte, error) {
	c.gets++
	return c.Store.Get(ctx, id, off, length)
}

func put(t *testing.T, s blob.Store, seed uint64, n int) (cas.Hash, []byte) {
	t.Helper()
	id, data := blobtest.Blob(seed, n)
	if err := s.Put(t.Context(), id, data); err != nil {
		t.Fatal(err)
	}
	return id, data
}

func get(t *testing.T, s blob.Store, id cas.Hash, want []byte) {
	t.Helper()
	got, err := s.Get(t.Context(), id, 0, -1)
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("get %s: %d bytes, %v", id.Short(), len(got), err)
	}
}

// TestLRU: repeated reads are served from the cache, ranged reads too;
// past the bound the least recently used blob goes; a reopened cache
// keeps what it held.
func TestLRU(t *testing.T) {
	dir := t.TempDir()
	inner := &counting{Store: memblob.New()}
	c := open(t, dir, 80000) // blobs of at most 10,000 bytes are kept
	s := diskcache.Wrap(inner, c)
	a, aData := put(t, s, 1, 10000)
	get(t, s, a, aData)
	get(t, s, a, aData)
	if got, err := s.Get(t.Context(), a, 100, 10); err != nil || !bytes.Equal(got, aData[100:110]) {
		t.Fatalf("ranged read from the cache: %v", err)
	}
	if inner.gets != 1 {
		t.Fatalf("%d reads reached the store, want 1", inner.gets)
	}
	var ids []cas.Hash
	var datas [][]byte
	for i := range 8 {
		id, data := put(t, s, uint64(10+i), 10000)
		get(t, s, id, data)
		if i == 3 {
			get(t, s, a, aData) // a is recent again
		}
		ids, datas = append(ids, id), append(datas, data)
	}
	st := c.Stats()
	if st.Bytes > 80000 || st.Evictions != 1 {
		t.Fatalf("stats after 9 blobs of 10 kB in 80 kB: %+v", st)
	}
	before := inner.gets
	get(t, s, a, aData)
	get(t, s, ids[7], datas[7])
	if inner.gets != before {
		t.Fatal("a recently used blob was evicted")
	}
	get(t, s, ids[0], datas[0])
	if inner.gets != before+1 {
		t.Fatal("the least recently used blob was not the one evicted")
	}
	// Reopened, the cache serves what it holds.
	c2 := open(t, dir, 80000)
	inner.gets = 0
	s2 := diskcache.Wrap(inner, c2)
	get(t, s2, ids[7], datas[7])
	if inner.gets != 0 || c2.Stats().Bytes == 0 {
		t.Fatalf("reopened cache missed: %+v", c2.Stats())
	}
	// Deleting a blob drops its copy.
	if err := s2.Delete(t.Context(), ids[7]); err != nil {
		t.Fatal(err)
	}
	if _, err := s2.Get(t.Context(), ids[7], 0, -1); err == nil {
		t.Fatal("deleted blob served from the cache")
	}
}

// TestDamageNotServed: a cache file flipped, truncated or left half
// written in tmp/ is never served; the blob comes from the store.
func TestDamageNotServed(t *testing.T) {
	dir := t.TempDir()
	inner := &counting{Store: memblob.New()}
	c := open(t, dir, 1<<20)
	s := diskcache.Wrap(inner, c)
	id, data := put(t, s, 1, 5000)
	get(t, s, id, data)
	path := filepath.Join(dir, id.String()[:2], id.String())
	for name, damage := range map[string]func([]byte) []byte{
		"flipped":   func(b []byte) []byte { b[100] ^= 1; return b },
		"truncated": func(b []byte) []byte { return b[:2500] },
	} {
		t.Run(name, func(t *testing.T) {
			get(t, s, id, data) // cached again
			b, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, damage(b), 0o600); err != nil {
				t.Fatal(err)
			}
			before := inner.gets
			get(t, s, id, data)
			if inner.gets != before+1 {
				t.Fatal("damaged copy served")
			}
		})
	}
	if c.Stats().Damaged != 2 {
		t.Fatalf("stats: %+v", c.Stats())
	}
	// A half-written temp file is removed at open and never becomes an
	// entry.
	half := filepath.Join(dir, "tmp", "blob-123")
	if err := os.WriteFile(half, data[:100], 0o600); err != nil {
		t.Fatal(err)
	}
	open(t, dir, 1<<20)
	if _, err := os.Stat(half); !os.IsNotExist(err) {
		t.Fatalf("temp file left at open: %v", err)
	}
}

func TestOpenNeedsSize(t *testing.T) {
	if _, err := diskcache.Open(t.TempDir(), 0); err == nil {
		t.Fatal("a cache of 0 bytes opened")
	}
}
