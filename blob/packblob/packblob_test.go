package packblob_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"

	"github.com/forkspace/forkspace/blob"
	"github.com/forkspace/forkspace/blob/blobtest"
	"github.com/forkspace/forkspace/blob/fileblob"
	"github.com/forkspace/forkspace/blob/memblob"
	"github.com/forkspace/forkspace/blob/packblob"
	"github.com/forkspace/forkspace/blob/s3blob"
	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/internal/s3client"
	"github.com/forkspace/forkspace/internal/s3test"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/meta/memmeta"
	"github.com/forkspace/forkspace/meta/sqlitemeta"
)

// fixture is a pack store over a fileblob directory pair and SQLite
// metadata, with what tests need to reach behind its back.
type fixture struct {
	s     *packblob.Store
	packs *fileblob.Store
	meta  meta.Store
}

func openSQLite(t testing.TB) meta.Store {
	t.Helper()
	m, err := sqlitemeta.Open(context.Background(), filepath.Join(t.TempDir(), "meta.db"), sqlitemeta.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return m
}

func newFile(t testing.TB, o packblob.Options) fixture {
	t.Helper()
	dir := t.TempDir()
	blobs, err := fileblob.Open(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	packs, err := fileblob.Open(filepath.Join(dir, "packs"))
	if err != nil {
		t.Fatal(err)
	}
	o.Packs, o.Meta = packs, openSQLite(t)
	s, err := packblob.New(blobs, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return fixture{s: s, packs: packs, meta: o.Meta}
}

func newMem(t testing.TB) blob.Store {
	s, err := packblob.New(memblob.New(), packblob.Options{Packs: memblob.New(), Meta: memmeta.New()})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestConformanceMemory(t *testing.T) {
	blobtest.Run(t, func(t *testing.T) blob.Store { return newMem(t) })
}

func TestConformanceFile(t *testing.T) {
	blobtest.Run(t, func(t *testing.T) blob.Store { return newFile(t, packblob.Options{}).s })
}

var prefixes atomic.Int64

func openS3(t testing.TB, endpoint string, o packblob.Options) (*packblob.Store, *s3blob.Store) {
	t.Helper()
	b, err := s3blob.Open(s3blob.Options{
		Bucket: "blobs", Prefix: fmt.Sprintf("store-%d", prefixes.Add(1)), Endpoint: endpoint, PathStyle: true,
		Region: s3test.Region, MaxBackoff: 20 * time.Millisecond,
		Credentials: &s3client.Credentials{AccessKeyID: s3test.AccessKey, SecretAccessKey: s3test.SecretKey},
	})
	if err != nil {
		t.Fatal(err)
	}
	o.Packs = b.PackStore()
	if o.Meta == nil {
		o.Meta = openSQLite(t)
	}
	s, err := packblob.New(b, o)
	if err != nil {
		t.Fatal(err)
	}
	return s, b
}

func TestConformanceS3(t *testing.T) {
	v := s3test.StartVersity(t, "blobs")
	blobtest.Run(t, func(t *testing.T) blob.Store {
		s, _ := openS3(t, v.URL, packblob.Options{})
		return s
	})
}

// packOf returns the pack blob id is in.
func packOf(t *testing.T, m meta.Store, id cas.Hash) meta.PackEntry {
	t.Helper()
	var e meta.PackEntry
	err := m.View(t.Context(), func(tx meta.Tx) error {
		var err error
		e, err = tx.PackEntry(id)
		return err
	})
	if err != nil {
		t.Fatalf("blob %s not packed: %v", id.Short(), err)
	}
	return e
}

func TestCorruption(t *testing.T) {
	var f fixture
	blobtest.RunCorruption(t, func(t *testing.T) blob.Store {
		f = newFile(t, packblob.Options{})
		return f.s
	}, func(t *testing.T, _ blob.Store, id cas.Hash) {
		e := packOf(t, f.meta, id)
		damage(t, f.packs.Path(e.Pack), func(b []byte) []byte { b[e.Offset+e.Size/2] ^= 1; return b })
	})
}

func damage(t *testing.T, path string, fn func([]byte) []byte) {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Chmod(path, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, fn(data), 0o600); err != nil {
		t.Fatal(err)
	}
}

// TestDamagedPack: a pack that is missing, truncated or holds other bytes
// makes every read of its blobs errdefs.ErrCorrupt (never fs.ErrNotExist,
// never wrong bytes), over files and over S3.
func TestDamagedPack(t *testing.T) {
	v := s3test.StartVersity(t, "blobs")
	ids := make([]cas.Hash, 3)
	datas := make([][]byte, 3)
	for i := range ids {
		ids[i], datas[i] = blobtest.Blob(uint64(i), 40000)
	}
	type store struct {
		s      *packblob.Store
		m      meta.Store
		remove func(pack cas.Hash)
		edit   func(pack cas.Hash, fn func([]byte) []byte)
	}
	stores := map[string]func(t *testing.T) store{
		"file": func(t *testing.T) store {
			f := newFile(t, packblob.Options{})
			return store{f.s, f.meta,
				func(p cas.Hash) { _ = os.Remove(f.packs.Path(p)) },
				func(p cas.Hash, fn func([]byte) []byte) { damage(t, f.packs.Path(p), fn) }}
		},
		"s3": func(t *testing.T) store {
			m := openSQLite(t)
			s, b := openS3(t, v.URL, packblob.Options{Meta: m})
			t.Cleanup(func() { _ = s.Close() })
			key := func(p cas.Hash) string { return b.PackStore().(*s3blob.Store).Key(p) }
			return store{s, m,
				func(p cas.Hash) { v.Remove(t, "blobs", key(p)) },
				func(p cas.Hash, fn func([]byte) []byte) {
					data, _ := v.Object(t, "blobs", key(p))
					v.Seed(t, "blobs", key(p), fn(data))
				}}
		},
	}
	for name, open := range stores {
		for _, fault := range []string{"missing", "truncated", "flipped"} {
			t.Run(name+"/"+fault, func(t *testing.T) {
				st := open(t)
				for i, id := range ids {
					if err := st.s.PutDeferred(t.Context(), id, datas[i]); err != nil {
						t.Fatal(err)
					}
				}
				if err := st.s.Sync(t.Context()); err != nil {
					t.Fatal(err)
				}
				e := packOf(t, st.m, ids[1])
				switch fault {
				case "missing":
					st.remove(e.Pack)
				case "truncated":
					st.edit(e.Pack, func(b []byte) []byte { return b[:e.Offset+10] })
				case "flipped":
					st.edit(e.Pack, func(b []byte) []byte { b[e.Offset+5] ^= 0x40; return b })
				}
				for _, r := range [][2]int64{{0, -1}, {0, e.Size}, {100, 1000}} {
					got, err := st.s.Get(t.Context(), ids[1], r[0], r[1])
					if fault == "flipped" && r[0] != 0 {
						if err != nil || !bytes.Equal(got, datas[1][r[0]:r[0]+r[1]]) {
							t.Errorf("ranged read beside the damage: %v", err)
						}
						continue
					}
					if !errors.Is(err, errdefs.ErrCorrupt) || errors.Is(err, fs.ErrNotExist) {
						t.Errorf("read %v of a blob in a %s pack: %d bytes, %v; want errdefs.ErrCorrupt", r, fault, len(got), err)
					}
				}
			})
		}
	}
}

// TestDeferred: deferred puts wait in memory, readable, and one Sync
// stores them all in one pack; a full pack is stored without a Sync.
func TestDeferred(t *testing.T) {
	f := newFile(t, packblob.Options{PackSize: 1 << 20})
	ctx := t.Context()
	var ids []cas.Hash
	var datas [][]byte
	for i := range 10 {
		id, data := blobtest.Blob(uint64(i), 50000)
		ids, datas = append(ids, id), append(datas, data)
		if err := f.s.PutDeferred(ctx, id, data); err != nil {
			t.Fatal(err)
		}
	}
	if n := countPacks(t, f.packs); n != 0 {
		t.Fatalf("%d packs stored before a Sync or a full pack", n)
	}
	for i, id := range ids {
		if got, err := f.s.Get(ctx, id, 0, -1); err != nil || !bytes.Equal(got, datas[i]) {
			t.Fatalf("read of a waiting blob: %v", err)
		}
	}
	if err := f.s.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if n := countPacks(t, f.packs); n != 1 {
		t.Fatalf("one Sync stored %d packs, want 1", n)
	}
	first := packOf(t, f.meta, ids[0]).Pack
	for i, id := range ids {
		if packOf(t, f.meta, id).Pack != first {
			t.Fatalf("blob %d in another pack", i)
		}
		if got, err := f.s.Get(ctx, id, 0, -1); err != nil || !bytes.Equal(got, datas[i]) {
			t.Fatalf("read of a packed blob: %v", err)
		}
	}
	// 30 more of 50 kB fill one 1 MiB pack (stored at once) and start
	// another; the Sync stores that one.
	for i := range 30 {
		id, data := blobtest.Blob(uint64(100+i), 50000)
		if err := f.s.PutDeferred(ctx, id, data); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.s.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	if n := countPacks(t, f.packs); n != 3 {
		t.Fatalf("%d packs, want 3", n)
	}
	// A large blob is an object of its own.
	id, data := blobtest.Blob(7, 2<<20)
	if err := f.s.Put(ctx, id, data); err != nil {
		t.Fatal(err)
	}
	if n := countPacks(t, f.packs); n != 3 {
		t.Fatalf("a large blob went into a pack")
	}
}

func countPacks(t *testing.T, packs blob.Store) int {
	t.Helper()
	n := 0
	if err := packs.List(t.Context(), func(blob.Info) error { n++; return nil }); err != nil {
		t.Fatal(err)
	}
	return n
}

// failing is a blob store whose Puts fail while fail is set.
type failing struct {
	blob.Store
	fail atomic.Bool
}

var errInjected = errors.New("injected failure")

func (f *failing) Put(ctx context.Context, id cas.Hash, data []byte) error {
	if f.fail.Load() {
		return errInjected
	}
	return f.Store.Put(ctx, id, data)
}

// TestUploadFails: a pack that cannot be stored fails the Sync; its blobs
// stay readable and the next Sync stores them.
func TestUploadFails(t *testing.T) {
	packs := &failing{Store: memblob.New()}
	m := memmeta.New()
	s, err := packblob.New(memblob.New(), packblob.Options{Packs: packs, Meta: m})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := t.Context()
	id, data := blobtest.Blob(1, 5000)
	packs.fail.Store(true)
	if err := s.PutDeferred(ctx, id, data); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(ctx); !errors.Is(err, errInjected) {
		t.Fatalf("sync with the pack store failing: %v", err)
	}
	if got, err := s.Get(ctx, id, 0, -1); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("blob of a failed pack: %v", err)
	}
	packs.fail.Store(false)
	if err := s.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	packOf(t, m, id)
	if got, err := s.Get(ctx, id, 0, -1); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("blob after the retried sync: %v", err)
	}
}

func TestNewNeedsPacksAndMeta(t *testing.T) {
	if _, err := packblob.New(memblob.New(), packblob.Options{Meta: memmeta.New()}); !errors.Is(err, fs.ErrInvalid) {
		t.Fatalf("new without a pack store: %v", err)
	}
}

// TestReadAhead: reading a packed blob whole hands the blobs after it in
// the pack, up to the read-ahead, to Prefetched, each verified: a damaged
// one is left out.
func TestReadAhead(t *testing.T) {
	got := map[cas.Hash][]byte{}
	f := newFile(t, packblob.Options{ReadAhead: 50000, Prefetched: func(id cas.Hash, data []byte) {
		got[id] = append([]byte(nil), data...)
	}})
	ctx := t.Context()
	var ids []cas.Hash
	datas := map[cas.Hash][]byte{}
	for i := range 10 {
		id, data := blobtest.Blob(uint64(i), 10000)
		ids = append(ids, id)
		datas[id] = data
		if err := f.s.PutDeferred(ctx, id, data); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.s.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	e := packOf(t, f.meta, ids[3])
	damage(t, f.packs.Path(e.Pack), func(b []byte) []byte { b[e.Offset+9] ^= 1; return b })
	if data, err := f.s.Get(ctx, ids[1], 0, -1); err != nil || !bytes.Equal(data, datas[ids[1]]) {
		t.Fatalf("read ahead of blob 1: %v", err)
	}
	// Blobs 2–5 fit in 50,000 bytes from blob 1; 3 is damaged.
	if len(got) != 3 {
		t.Fatalf("prefetched %d blobs, want 3", len(got))
	}
	for _, i := range []int{2, 4, 5} {
		if !bytes.Equal(got[ids[i]], datas[ids[i]]) {
			t.Fatalf("blob %d prefetched wrong or not at all", i)
		}
	}
	if _, err := f.s.Get(ctx, ids[3], 0, -1); !errors.Is(err, errdefs.ErrCorrupt) {
		t.Fatalf("damaged blob: %v", err)
	}
}
