package blobtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync"
	"testing"

	"github.com/forkspace/forkspace/blob"
	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/errdefs"
)

// Blob returns n deterministic pseudo-random bytes derived from seed and
// their address.
func Blob(seed uint64, n int) (cas.Hash, []byte) {
	data := make([]byte, n)
	x := seed*0x9e3779b97f4a7c15 + 1
	for i := range data {
		x ^= x << 13
		x ^= x >> 7
		x ^= x << 17
		data[i] = byte(x)
	}
	return cas.Sum(data), data
}

// Run runs the conformance suite. newStore must return a fresh, empty
// store for each call; Run closes it.
func Run(t *testing.T, newStore func(t *testing.T) blob.Store) {
	tests := []struct {
		name string
		fn   func(t *testing.T, s blob.Store)
	}{
		{"RoundTrip", testRoundTrip},
		{"IdempotentPut", testIdempotentPut},
		{"Ranges", testRanges},
		{"Missing", testMissing},
		{"Stat", testStat},
		{"List", testList},
		{"ListStopsOnError", testListStopsOnError},
		{"Delete", testDelete},
		{"ConcurrentPut", testConcurrentPut},
		{"CallerBuffers", testCallerBuffers},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := newStore(t)
			t.Cleanup(func() { _ = s.Close() })
			tt.fn(t, s)
		})
	}
	t.Run("Closed", func(t *testing.T) { testClosed(t, newStore(t)) })
}

func mustPut(t *testing.T, s blob.Store, id cas.Hash, data []byte) {
	t.Helper()
	if err := s.Put(t.Context(), id, data); err != nil {
		t.Fatalf("put %s: %v", id.Short(), err)
	}
}

func mustGet(t *testing.T, s blob.Store, id cas.Hash, off, length int64) []byte {
	t.Helper()
	got, err := s.Get(t.Context(), id, off, length)
	if err != nil {
		t.Fatalf("get %s [%d,+%d): %v", id.Short(), off, length, err)
	}
	return got
}

func testRoundTrip(t *testing.T, s blob.Store) {
	for i, n := range []int{0, 1, 100, 64 << 10, 1<<20 + 3} {
		id, data := Blob(uint64(i), n)
		mustPut(t, s, id, data)
		if got := mustGet(t, s, id, 0, -1); !bytes.Equal(got, data) {
			t.Fatalf("blob of %d bytes: got %d bytes back, different", n, len(got))
		}
	}
}

func testIdempotentPut(t *testing.T, s blob.Store) {
	id, data := Blob(1, 1000)
	mustPut(t, s, id, data)
	before, err := s.Stat(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	mustPut(t, s, id, data)
	after, err := s.Stat(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if !after.ModTime.Equal(before.ModTime) || after.Size != before.Size {
		t.Fatalf("second put rewrote the blob: %+v then %+v", before, after)
	}
	if got := mustGet(t, s, id, 0, -1); !bytes.Equal(got, data) {
		t.Fatal("blob changed after second put")
	}
}

func testRanges(t *testing.T, s blob.Store) {
	id, data := Blob(2, 1000)
	mustPut(t, s, id, data)
	tests := []struct {
		name        string
		off, length int64
		want        []byte
	}{
		{"start", 0, 10, data[:10]},
		{"middle", 400, 100, data[400:500]},
		{"end", 990, 10, data[990:]},
		{"to end", 900, -1, data[900:]},
		{"past end", 995, 100, data[995:]},
		{"at end", 1000, 5, []byte{}},
		{"empty", 10, 0, []byte{}},
		{"whole with length", 0, 1000, data},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := mustGet(t, s, id, tt.off, tt.length); !bytes.Equal(got, tt.want) {
				t.Fatalf("get [%d,+%d) returned %d bytes, want %d", tt.off, tt.length, len(got), len(tt.want))
			}
		})
	}
	for _, off := range []int64{1001, 1 << 40, -1} {
		if _, err := s.Get(t.Context(), id, off, 1); !errors.Is(err, fs.ErrInvalid) {
			t.Fatalf("get at offset %d: %v, want fs.ErrInvalid", off, err)
		}
	}
}

func testMissing(t *testing.T, s blob.Store) {
	id, _ := Blob(3, 10)
	if _, err := s.Get(t.Context(), id, 0, -1); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("get missing: %v, want fs.ErrNotExist", err)
	}
	if _, err := s.Get(t.Context(), id, 5, 1); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("ranged get missing: %v, want fs.ErrNotExist", err)
	}
	if _, err := s.Stat(t.Context(), id); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("stat missing: %v, want fs.ErrNotExist", err)
	}
}

func testStat(t *testing.T, s blob.Store) {
	id, data := Blob(4, 4321)
	mustPut(t, s, id, data)
	info, err := s.Stat(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	if info.ID != id || info.Size != int64(len(data)) || info.ModTime.IsZero() {
		t.Fatalf("stat = %+v, want id %s size %d and a time", info, id.Short(), len(data))
	}
}

func testList(t *testing.T, s blob.Store) {
	want := map[cas.Hash]int64{}
	for i := range 50 {
		id, data := Blob(uint64(100+i), 10+i)
		mustPut(t, s, id, data)
		want[id] = int64(len(data))
	}
	got := map[cas.Hash]int64{}
	err := s.List(t.Context(), func(info blob.Info) error {
		if _, dup := got[info.ID]; dup {
			return fmt.Errorf("blob %s listed twice", info.ID.Short())
		}
		got[info.ID] = info.Size
		return nil
	})
	if err != nil {
		t.Fatalf("list: %v", err)
	}
	if len(got) != len(want) {
		t.Fatalf("list saw %d blobs, want %d", len(got), len(want))
	}
	for id, size := range want {
		if got[id] != size {
			t.Fatalf("list: blob %s size %d, want %d", id.Short(), got[id], size)
		}
	}
}

func testListStopsOnError(t *testing.T, s blob.Store) {
	for i := range 5 {
		id, data := Blob(uint64(200+i), 10)
		mustPut(t, s, id, data)
	}
	stop := errors.New("stop")
	calls := 0
	err := s.List(t.Context(), func(blob.Info) error {
		calls++
		return stop
	})
	if !errors.Is(err, stop) || calls != 1 {
		t.Fatalf("list = %v after %d calls, want stop after 1", err, calls)
	}
}

func testDelete(t *testing.T, s blob.Store) {
	id, data := Blob(5, 100)
	keep, keepData := Blob(6, 100)
	mustPut(t, s, id, data)
	mustPut(t, s, keep, keepData)
	if err := s.Delete(t.Context(), id); err != nil {
		t.Fatalf("delete: %v", err)
	}
	if _, err := s.Get(t.Context(), id, 0, -1); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("get after delete: %v, want fs.ErrNotExist", err)
	}
	if err := s.Delete(t.Context(), id); err != nil {
		t.Fatalf("delete missing: %v", err)
	}
	if got := mustGet(t, s, keep, 0, -1); !bytes.Equal(got, keepData) {
		t.Fatal("delete touched another blob")
	}
	mustPut(t, s, id, data)
	if got := mustGet(t, s, id, 0, -1); !bytes.Equal(got, data) {
		t.Fatal("put after delete did not restore the blob")
	}
}

// testConcurrentPut races writers of the same blobs against readers, which
// must see the whole blob or nothing.
func testConcurrentPut(t *testing.T, s blob.Store) {
	const writers = 16
	ids := make([]cas.Hash, 4)
	datas := make([][]byte, len(ids))
	for i := range ids {
		ids[i], datas[i] = Blob(uint64(300+i), 256<<10)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 2*writers*len(ids))
	for w := range writers {
		wg.Go(func() {
			for i := range ids {
				i := (i + w) % len(ids)
				if err := s.Put(context.Background(), ids[i], datas[i]); err != nil {
					errs <- err
				}
			}
		})
		wg.Go(func() {
			for i := range ids {
				got, err := s.Get(context.Background(), ids[i], 0, -1)
				switch {
				case errors.Is(err, fs.ErrNotExist):
				case err != nil:
					errs <- err
				case !bytes.Equal(got, datas[i]):
					errs <- fmt.Errorf("reader saw %d bytes of a %d-byte blob", len(got), len(datas[i]))
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	for i, id := range ids {
		if got := mustGet(t, s, id, 0, -1); !bytes.Equal(got, datas[i]) {
			t.Fatalf("blob %d damaged by concurrent puts", i)
		}
	}
}

// testCallerBuffers checks that the store neither keeps the caller's Put
// buffer nor hands out its own memory.
func testCallerBuffers(t *testing.T, s blob.Store) {
	id, data := Blob(7, 100)
	buf := append([]byte(nil), data...)
	mustPut(t, s, id, buf)
	clear(buf)
	got := mustGet(t, s, id, 0, -1)
	clear(got)
	if again := mustGet(t, s, id, 0, -1); !bytes.Equal(again, data) {
		t.Fatal("store shares memory with its callers")
	}
}

func testClosed(t *testing.T, s blob.Store) {
	id, data := Blob(8, 10)
	mustPut(t, s, id, data)
	if err := s.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}
	ctx := t.Context()
	checks := map[string]error{
		"put":    s.Put(ctx, id, data),
		"delete": s.Delete(ctx, id),
		"list":   s.List(ctx, func(blob.Info) error { return nil }),
		"close":  s.Close(),
	}
	_, checks["get"] = s.Get(ctx, id, 0, -1)
	_, checks["stat"] = s.Stat(ctx, id)
	for op, err := range checks {
		if !errors.Is(err, fs.ErrClosed) {
			t.Errorf("%s after close: %v, want fs.ErrClosed", op, err)
		}
	}
}

// RunCorruption checks that a whole-blob Get of a damaged blob fails with
// errdefs.ErrCorrupt while ranged reads still work. corrupt must change
// one stored byte of blob id in s, behind the store's back.
func RunCorruption(t *testing.T, newStore func(t *testing.T) blob.Store, corrupt func(t *testing.T, s blob.Store, id cas.Hash)) {
	s := newStore(t)
	t.Cleanup(func() { _ = s.Close() })
	id, data := Blob(9, 5000)
	mustPut(t, s, id, data)
	corrupt(t, s, id)
	if _, err := s.Get(t.Context(), id, 0, -1); !errors.Is(err, errdefs.ErrCorrupt) {
		t.Fatalf("whole get of a damaged blob: %v, want errdefs.ErrCorrupt", err)
	}
	if _, err := s.Get(t.Context(), id, 1, 10); err != nil {
		t.Fatalf("ranged get of a damaged blob: %v", err)
	}
}
