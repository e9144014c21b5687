package fileblob_test

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/forkspace/forkspace/blob"
	"github.com/forkspace/forkspace/blob/blobtest"
	"github.com/forkspace/forkspace/blob/fileblob"
	"github.com/forkspace/forkspace/cas"
)

func open(t testing.TB, dir string) *fileblob.Store {
	t.Helper()
	s, err := fileblob.Open(dir)
	if err != nil {
		t.Fatalf("open: %v", err)
	}
	return s
}

func TestConformance(t *testing.T) {
	blobtest.Run(t, func(t *testing.T) blob.Store { return open(t, t.TempDir()) })
}

func TestCorruption(t *testing.T) {
	blobtest.RunCorruption(t, func(t *testing.T) blob.Store { return open(t, t.TempDir()) },
		func(t *testing.T, s blob.Store, id cas.Hash) {
			path := s.(*fileblob.Store).Path(id)
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			data[len(data)/2] ^= 1
			if err := os.WriteFile(path, data, 0o600); err != nil {
				t.Fatal(err)
			}
		})
}

// TestMissingHidesPath: a missing blob's error names its address, not the
// host path of its file (it reached fsck's output and tenants).
func TestMissingHidesPath(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	defer s.Close()
	id, _ := blobtest.Blob(1, 100)
	_, gerr := s.Get(t.Context(), id, 0, -1)
	_, serr := s.Stat(t.Context(), id)
	for _, err := range []error{gerr, serr} {
		if !errors.Is(err, fs.ErrNotExist) || strings.Contains(err.Error(), dir) || !strings.Contains(err.Error(), id.String()) {
			t.Errorf("missing blob: %v", err)
		}
	}
}

func TestLayout(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	defer s.Close()
	id, data := blobtest.Blob(1, 100)
	if err := s.Put(t.Context(), id, data); err != nil {
		t.Fatal(err)
	}
	h := id.String()
	got, err := os.ReadFile(filepath.Join(dir, h[:2], h[2:4], h))
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("blob not at <dir>/ab/cd/<hex>: %v", err)
	}
	tmp, err := os.ReadDir(filepath.Join(dir, "tmp"))
	if err != nil || len(tmp) != 0 {
		t.Fatalf("tmp holds %d files after put (%v), want none", len(tmp), err)
	}
}

// TestReopen checks that blobs survive the store and that Open clears only
// stale temp files.
func TestReopen(t *testing.T) {
	dir := t.TempDir()
	s := open(t, dir)
	id, data := blobtest.Blob(2, 1000)
	if err := s.Put(t.Context(), id, data); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	stale := filepath.Join(dir, "tmp", "stale")
	fresh := filepath.Join(dir, "tmp", "fresh")
	for _, p := range []string{stale, fresh} {
		if err := os.WriteFile(p, []byte("partial"), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	old := time.Now().Add(-2 * fileblob.StaleTemp)
	if err := os.Chtimes(stale, old, old); err != nil {
		t.Fatal(err)
	}
	s = open(t, dir)
	defer s.Close()
	if _, err := os.Stat(stale); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("stale temp file survived Open: %v", err)
	}
	if _, err := os.Stat(fresh); err != nil {
		t.Fatalf("fresh temp file removed by Open: %v", err)
	}
	got, err := s.Get(t.Context(), id, 0, -1)
	if err != nil || !bytes.Equal(got, data) {
		t.Fatalf("blob lost across reopen: %v", err)
	}
	n := 0
	if err := s.List(t.Context(), func(blob.Info) error { n++; return nil }); err != nil || n != 1 {
		t.Fatalf("list after reopen saw %d blobs (%v), want 1", n, err)
	}
}

// TestPutRepairsTruncated checks that Put rewrites a blob whose file has
// the wrong size instead of trusting it.
func TestPutRepairsTruncated(t *testing.T) {
	s := open(t, t.TempDir())
	defer s.Close()
	id, data := blobtest.Blob(3, 1000)
	ctx := context.Background()
	if err := s.Put(ctx, id, data); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(s.Path(id), 10); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(ctx, id, data); err != nil {
		t.Fatal(err)
	}
	if got, err := s.Get(ctx, id, 0, -1); err != nil || !bytes.Equal(got, data) {
		t.Fatalf("get after repairing put: %v", err)
	}
}

// TestSharedDirectory runs two stores over one directory, as two processes
// would, putting the same blobs concurrently.
func TestSharedDirectory(t *testing.T) {
	dir := t.TempDir()
	a, b := open(t, dir), open(t, dir)
	defer a.Close()
	defer b.Close()
	var wg sync.WaitGroup
	for _, s := range []*fileblob.Store{a, b, a, b} {
		wg.Go(func() {
			for i := range 20 {
				id, data := blobtest.Blob(uint64(i), 10_000)
				if err := s.Put(context.Background(), id, data); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	for i := range 20 {
		id, data := blobtest.Blob(uint64(i), 10_000)
		for _, s := range []*fileblob.Store{a, b} {
			if got, err := s.Get(context.Background(), id, 0, -1); err != nil || !bytes.Equal(got, data) {
				t.Fatalf("blob %d: %v", i, err)
			}
		}
	}
	if tmp, _ := os.ReadDir(filepath.Join(dir, "tmp")); len(tmp) != 0 {
		t.Fatalf("%d temp files left behind", len(tmp))
	}
}

func BenchmarkStore(b *testing.B) {
	blobtest.Benchmark(b, func(b *testing.B) blob.Store { return open(b, b.TempDir()) })
}

// TestDeleteRemovesEmptyShards: once GC deleted every blob, no empty
// shard directory is left behind.
func TestDeleteRemovesEmptyShards(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := open(t, dir)
	var ids []cas.Hash
	for i := range 300 {
		data := []byte{byte(i), byte(i >> 8), 'x'}
		id := cas.Sum(data)
		if err := s.Put(ctx, id, data); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	for _, id := range ids[:150] {
		if err := s.Delete(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	for _, id := range ids[150:] {
		if _, err := s.Stat(ctx, id); err != nil {
			t.Fatalf("a blob sharing a shard with a deleted one: %v", err)
		}
		if err := s.Delete(ctx, id); err != nil {
			t.Fatal(err)
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(ents) != 1 || ents[0].Name() != "tmp" {
		var names []string
		for _, e := range ents {
			names = append(names, e.Name())
		}
		t.Fatalf("left after deleting every blob: %v", names)
	}
	// A deleted shard is created again by the next Put.
	if err := s.Put(ctx, ids[0], []byte{0, 0, 'x'}); err != nil {
		t.Fatal(err)
	}
}

// TestPutRacesShardRemoval: Puts and Deletes of blobs sharing one leaf
// directory, from two Store values on one directory (two processes), never
// fail a Put and never lose a blob that was Put and not deleted.
func TestPutRacesShardRemoval(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	a, b := open(t, dir), open(t, dir)
	// Blobs whose addresses share the leaf of the first.
	var datas [][]byte
	var leaf string
	for i := 0; len(datas) < 3; i++ {
		d := []byte{byte(i), byte(i >> 8), byte(i >> 16)}
		h := cas.Sum(d).String()[:4]
		if leaf == "" {
			leaf = h
		}
		if h == leaf {
			datas = append(datas, d)
		}
	}
	var wg sync.WaitGroup
	for w, s := range []*fileblob.Store{a, b} {
		wg.Go(func() {
			for range 300 {
				for _, d := range datas[w : w+2] {
					if err := s.Put(ctx, cas.Sum(d), d); err != nil {
						t.Errorf("put: %v", err)
						return
					}
				}
				if err := s.Delete(ctx, cas.Sum(datas[w])); err != nil {
					t.Errorf("delete: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	// datas[2] was Put last by b and deleted by nobody.
	if _, err := a.Stat(ctx, cas.Sum(datas[2])); err != nil {
		t.Fatalf("lost a blob: %v", err)
	}
}

// TestPutDeferred: a deferred put is readable at once, in its final
// place, with nothing left in tmp/; Sync makes it durable, skips a blob
// deleted meanwhile, does nothing when nothing is pending, and fails
// after Close; a deferred put of a present blob rewrites nothing.
func TestPutDeferred(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s := open(t, dir)
	a, b := []byte("deferred blob a"), []byte("deferred blob b")
	ha, hb := cas.Sum(a), cas.Sum(b)
	for _, d := range [][]byte{a, b, a} {
		if err := s.PutDeferred(ctx, cas.Sum(d), d); err != nil {
			t.Fatal(err)
		}
	}
	for h, want := range map[cas.Hash][]byte{ha: a, hb: b} {
		got, err := s.Get(ctx, h, 0, -1)
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("get %s before Sync: %q, %v", h.Short(), got, err)
		}
	}
	if tmp, _ := os.ReadDir(filepath.Join(dir, "tmp")); len(tmp) != 0 {
		t.Fatalf("tmp/ holds %d files after deferred puts", len(tmp))
	}
	if err := s.Delete(ctx, hb); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(ctx); err != nil {
		t.Fatalf("sync with a deleted blob pending: %v", err)
	}
	if err := s.Sync(ctx); err != nil {
		t.Fatalf("sync with nothing pending: %v", err)
	}
	if got, err := s.Get(ctx, ha, 0, -1); err != nil || !bytes.Equal(got, a) {
		t.Fatalf("get after Sync: %q, %v", got, err)
	}
	s.Close()
	if err := s.Sync(ctx); !errors.Is(err, fs.ErrClosed) {
		t.Fatalf("sync after Close: %v, want fs.ErrClosed", err)
	}
}

// TestSyncConcurrent: concurrent deferred puts and Syncs; each Sync
// returns only when the blobs put before it are synced (no error, no
// race; run with -race).
func TestSyncConcurrent(t *testing.T) {
	ctx := context.Background()
	s := open(t, t.TempDir())
	var wg sync.WaitGroup
	for g := range 4 {
		wg.Go(func() {
			for i := range 20 {
				d := []byte(strings.Repeat("x", g*100+i+1))
				if err := s.PutDeferred(ctx, cas.Sum(d), d); err != nil {
					t.Error(err)
					return
				}
				if i%5 == 4 {
					if err := s.Sync(ctx); err != nil {
						t.Error(err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
}
