package s3blob_test

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/forkspace/forkspace/blob"
	"github.com/forkspace/forkspace/blob/blobtest"
	"github.com/forkspace/forkspace/blob/s3blob"
	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/internal/s3client"
	"github.com/forkspace/forkspace/internal/s3test"
)

const bucket = "blobs"

// prefixes numbers the stores of one server, so each starts empty.
var prefixes atomic.Int64

func options(endpoint, prefix string) s3blob.Options {
	return s3blob.Options{
		Bucket: bucket, Prefix: prefix, Endpoint: endpoint, PathStyle: true, Region: s3test.Region,
		Credentials: &s3client.Credentials{AccessKeyID: s3test.AccessKey, SecretAccessKey: s3test.SecretKey},
		MaxBackoff:  20 * time.Millisecond,
	}
}

func open(t testing.TB, o s3blob.Options) *s3blob.Store {
	t.Helper()
	s, err := s3blob.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func fresh(t testing.TB, endpoint string) s3blob.Options {
	return options(endpoint, fmt.Sprintf("store-%d", prefixes.Add(1)))
}

func TestConformance(t *testing.T) {
	v := s3test.StartVersity(t, bucket)
	blobtest.Run(t, func(t *testing.T) blob.Store { return open(t, fresh(t, v.URL)) })
}

func TestCorruption(t *testing.T) {
	v := s3test.StartVersity(t, bucket)
	blobtest.RunCorruption(t, func(t *testing.T) blob.Store { return open(t, fresh(t, v.URL)) },
		func(t *testing.T, s blob.Store, id cas.Hash) {
			key := s.(*s3blob.Store).Key(id)
			data, ok := v.Object(t, bucket, key)
			if !ok {
				t.Fatalf("%s not in the bucket", key)
			}
			data[len(data)/2] ^= 1
			v.Seed(t, bucket, key, data)
		})
}

// TestDamage: an object truncated or replaced behind the store's back is
// never returned as the blob's bytes, and a Put of the blob repairs it.
func TestDamage(t *testing.T) {
	v := s3test.StartVersity(t, bucket)
	s := open(t, fresh(t, v.URL))
	defer s.Close()
	id, data := blobtest.Blob(1, 10000)
	for name, bad := range map[string][]byte{"truncated": data[:5000], "empty": {}, "other bytes": bytes.Repeat([]byte{7}, len(data))} {
		t.Run(name, func(t *testing.T) {
			v.Seed(t, bucket, s.Key(id), bad)
			if got, err := s.Get(t.Context(), id, 0, -1); !errors.Is(err, errdefs.ErrCorrupt) {
				t.Fatalf("get of a damaged blob: %d bytes, %v; want errdefs.ErrCorrupt", len(got), err)
			}
			if err := s.Put(t.Context(), id, data); err != nil {
				t.Fatal(err)
			}
			if len(bad) != len(data) {
				// Put repairs a blob of the wrong size; one of the right
				// size is left alone (its damage is fsck's to find).
				if got, err := s.Get(t.Context(), id, 0, -1); err != nil || !bytes.Equal(got, data) {
					t.Fatalf("get after repairing put: %v", err)
				}
			}
		})
	}
}

// TestPrefixes: stores under "a", "ab", "a/b" and no prefix in one bucket
// never see, and never delete, each other's blobs.
func TestPrefixes(t *testing.T) {
	v := s3test.StartVersity(t, bucket)
	prefixes := []string{"a", "ab", "a/b", "", "/a/b/blobs/"}
	stores := make([]*s3blob.Store, len(prefixes))
	ids := make([]cas.Hash, len(prefixes))
	shared, sharedData := blobtest.Blob(99, 100)
	for i, p := range prefixes {
		stores[i] = open(t, options(v.URL, p))
		defer stores[i].Close()
		var data []byte
		ids[i], data = blobtest.Blob(uint64(i), 100+i)
		for _, put := range []struct {
			id   cas.Hash
			data []byte
		}{{ids[i], data}, {shared, sharedData}} {
			if err := stores[i].Put(t.Context(), put.id, put.data); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i, s := range stores {
		if err := s.Delete(t.Context(), shared); err != nil {
			t.Fatal(err)
		}
		var got []cas.Hash
		if err := s.List(t.Context(), func(info blob.Info) error { got = append(got, info.ID); return nil }); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, []cas.Hash{ids[i]}) {
			t.Errorf("store %q lists %d blobs, want its own one", prefixes[i], len(got))
		}
		for j, id := range ids {
			_, err := s.Stat(t.Context(), id)
			if (j == i) != (err == nil) {
				t.Errorf("store %q: stat of store %q's blob: %v", prefixes[i], prefixes[j], err)
			}
		}
		for _, o := range stores[i+1:] {
			if _, err := o.Stat(t.Context(), shared); err != nil {
				t.Errorf("deleting from store %q removed another store's blob: %v", prefixes[i], err)
			}
		}
	}
}

// TestFaults: 500s, 503 SlowDown, answers lost after the request took
// effect, stalled requests and bodies cut short are retried; each
// operation ends with the right bytes or an error, and the bucket holds
// whole blobs only.
func TestFaults(t *testing.T) {
	v := s3test.StartVersity(t, bucket)
	f := s3test.StartFaults(t, v.Direct)
	o := fresh(t, f.URL)
	o.Timeout = 500 * time.Millisecond
	s := open(t, o)
	defer s.Close()
	ctx := t.Context()
	faults := []s3test.Fault{s3test.InternalError, s3test.SlowDown, s3test.LostAnswer, s3test.Stall}
	for i, fault := range faults {
		id, data := blobtest.Blob(uint64(i), 50000)
		f.Inject("PUT", fault, fault)
		if err := s.Put(ctx, id, data); err != nil {
			t.Fatalf("put through two faults %d: %v", fault, err)
		}
		f.Inject("GET", fault, s3test.Truncate)
		f.Inject("HEAD", fault)
		if got, err := s.Get(ctx, id, 0, -1); err != nil || !bytes.Equal(got, data) {
			t.Fatalf("get through faults %d: %d bytes, %v", fault, len(got), err)
		}
		f.Clear()
		f.Inject("HEAD", fault)
		f.Inject("GET", s3test.Truncate, fault)
		if got, err := s.Get(ctx, id, 100, 1000); err != nil || !bytes.Equal(got, data[100:1100]) {
			t.Fatalf("ranged get through faults %d: %d bytes, %v", fault, len(got), err)
		}
		f.Clear()
		stored, ok := v.Object(t, bucket, s.Key(id))
		if !ok || !bytes.Equal(stored, data) {
			t.Fatalf("bucket holds %d bytes for a %d-byte blob after fault %d", len(stored), len(data), fault)
		}
	}
	if f.Injected() == 0 {
		t.Fatal("no fault was injected")
	}

	// Faults on every attempt: the operation fails, with the cause, and
	// leaves no object or a whole one.
	id, data := blobtest.Blob(100, 70000)
	always := slices.Repeat([]s3test.Fault{s3test.InternalError}, s3blob.DefaultMaxAttempts)
	f.Inject("PUT", always...)
	if err := s.Put(ctx, id, data); err == nil {
		t.Fatal("put with every attempt failing succeeded")
	}
	if _, ok := v.Object(t, bucket, s.Key(id)); ok {
		t.Fatal("a failed put left an object")
	}
	f.Clear()
	f.Inject("PUT", slices.Repeat([]s3test.Fault{s3test.LostAnswer}, s3blob.DefaultMaxAttempts)...)
	if err := s.Put(ctx, id, data); err == nil {
		t.Fatal("put with every answer lost succeeded")
	}
	if stored, ok := v.Object(t, bucket, s.Key(id)); !ok || !bytes.Equal(stored, data) {
		t.Fatalf("a put whose answers were lost left %d bytes (present %v)", len(stored), ok)
	}
	f.Clear()
	f.Inject("GET", slices.Repeat([]s3test.Fault{s3test.Truncate}, s3blob.DefaultMaxAttempts)...)
	if got, err := s.Get(ctx, id, 0, -1); err == nil {
		t.Fatalf("get with every body cut short returned %d bytes", len(got))
	}
	f.Clear()
	f.Inject("GET", slices.Repeat([]s3test.Fault{s3test.SlowDown}, s3blob.DefaultMaxAttempts)...)
	if _, err := s.Get(ctx, id, 0, -1); err == nil {
		t.Fatal("get throttled on every attempt succeeded")
	}
	f.Clear()
}

// TestDamagedOnTheWay: a PUT whose body is damaged between the store and
// the server is refused by the server (the body's SHA-256 is signed), so
// the put fails and stores nothing, or stores the right bytes on a retry.
func TestDamagedOnTheWay(t *testing.T) {
	v := s3test.StartVersity(t, bucket)
	f := s3test.StartFaults(t, v.Direct)
	s := open(t, fresh(t, f.URL))
	defer s.Close()
	ctx := t.Context()
	id, data := blobtest.Blob(7, 50000)
	f.Inject("PUT", slices.Repeat([]s3test.Fault{s3test.Corrupt}, s3blob.DefaultMaxAttempts)...)
	err := s.Put(ctx, id, data)
	if stored, ok := v.Object(t, bucket, s.Key(id)); ok && !bytes.Equal(stored, data) {
		t.Fatalf("a body damaged on the way was stored (put: %v)", err)
	} else if err == nil && !ok {
		t.Fatal("put succeeded and stored nothing")
	}
	if f.Injected() == 0 {
		t.Fatal("no body was damaged")
	}
	f.Clear()
	if err := s.Put(ctx, id, data); err != nil {
		t.Fatal(err)
	}
	if stored, ok := v.Object(t, bucket, s.Key(id)); !ok || !bytes.Equal(stored, data) {
		t.Fatalf("bucket holds %d bytes after a clean put (present %v)", len(stored), ok)
	}
}

// TestNoConditionalCreate: a server that answers If-None-Match with 501
// gets HEAD then an unconditional PUT, and no PUT for a blob it holds.
func TestNoConditionalCreate(t *testing.T) {
	v := s3test.StartVersity(t, bucket)
	f := s3test.StartFaults(t, v.Direct)
	s := open(t, fresh(t, f.URL))
	defer s.Close()
	id, data := blobtest.Blob(1, 1000)
	f.Inject("PUT", s3test.NotImplemented)
	if err := s.Put(t.Context(), id, data); err != nil {
		t.Fatalf("put to a server without conditional writes: %v", err)
	}
	if stored, ok := v.Object(t, bucket, s.Key(id)); !ok || !bytes.Equal(stored, data) {
		t.Fatal("the fallback put did not store the blob")
	}
	before, err := s.Stat(t.Context(), id)
	if err != nil {
		t.Fatal(err)
	}
	f.Inject("PUT", s3test.InternalError, s3test.InternalError, s3test.InternalError, s3test.InternalError, s3test.InternalError)
	if err := s.Put(t.Context(), id, data); err != nil {
		t.Fatalf("second put sent a PUT: %v", err)
	}
	f.Clear()
	if after, err := s.Stat(t.Context(), id); err != nil || !after.ModTime.Equal(before.ModTime) {
		t.Fatalf("second put rewrote the blob: %v", err)
	}
}

// TestMissing: a blob absent from the bucket is fs.ErrNotExist to every
// read, never empty bytes.
func TestMissing(t *testing.T) {
	v := s3test.StartVersity(t, bucket)
	s := open(t, fresh(t, v.URL))
	defer s.Close()
	id, data := blobtest.Blob(1, 3000)
	if err := s.Put(t.Context(), id, data); err != nil {
		t.Fatal(err)
	}
	v.Remove(t, bucket, s.Key(id))
	for _, r := range [][2]int64{{0, -1}, {0, 10}, {10, -1}, {0, 0}} {
		if got, err := s.Get(t.Context(), id, r[0], r[1]); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("get %v of a removed blob: %d bytes, %v", r, len(got), err)
		}
	}
}

func TestOpenNeedsBucket(t *testing.T) {
	if _, err := s3blob.Open(s3blob.Options{}); !errors.Is(err, fs.ErrInvalid) {
		t.Fatalf("open without a bucket: %v", err)
	}
}

func BenchmarkS3Blob(b *testing.B) {
	v := s3test.StartVersity(b, bucket)
	blobtest.Benchmark(b, func(b *testing.B) blob.Store { return open(b, fresh(b, v.Direct)) })
}
