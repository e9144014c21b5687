package content_test

import (
	"bytes"
	"errors"
	"testing"

	"github.com/forkspace/forkspace/content"
	"github.com/forkspace/forkspace/errdefs"
)

// TestReadFiles reads a mix of inline, chunked, empty, repeated, missing
// and damaged files in one call: each gets what ReadAll gets, the inline
// bodies come in one request, and the damage is errdefs.ErrCorrupt.
func TestReadFiles(t *testing.T) {
	e := newEnv(t, content.Options{Params: small, InlineMax: 1 << 10})
	var (
		ms   []content.Manifest
		want [][]byte
	)
	add := func(m content.Manifest, data []byte) {
		ms = append(ms, m)
		want = append(want, data)
	}
	for i, n := range []int{10, 0, 1 << 10, 5000, 700, 1} {
		data := randomBytes(uint64(i), n)
		add(e.write(t, data), data)
	}
	add(ms[0], want[0]) // the same body twice
	missing := e.write(t, []byte("a body that goes missing"))
	delete(e.meta.bodies, missing.Extents[0].Hash)
	add(missing, nil)
	damaged := e.write(t, []byte("a body that gets damaged"))
	e.meta.bodies[damaged.Extents[0].Hash] = []byte("a body that got DAMAGED!")
	add(damaged, nil)
	add(content.Manifest{Size: 3, Inline: true}, nil) // no body
	bad := map[int]bool{len(ms) - 3: true, len(ms) - 2: true, len(ms) - 1: true}

	s := e.reopen()
	var got [][]byte
	err := s.ReadFiles(t.Context(), ms, func(i int, data []byte, err error) error {
		if i != len(got) {
			t.Fatalf("file %d reported after %d others", i, len(got))
		}
		got = append(got, data)
		switch {
		case bad[i] && !errors.Is(err, errdefs.ErrCorrupt):
			t.Errorf("file %d: %v, want errdefs.ErrCorrupt", i, err)
		case !bad[i] && (err != nil || !bytes.Equal(data, want[i])):
			t.Errorf("file %d: %d bytes, %v; want %d bytes", i, len(data), err, len(want[i]))
		}
		return nil
	})
	if err != nil {
		t.Fatalf("ReadFiles: %v", err)
	}
	if len(got) != len(ms) {
		t.Fatalf("ReadFiles reported %d files of %d", len(got), len(ms))
	}
	if e.meta.batches != 1 {
		t.Errorf("ReadFiles asked for inline bodies %d times, want 1", e.meta.batches)
	}

	// fn's error stops the read; cached bodies need no request.
	stop := errors.New("stop")
	calls := 0
	err = s.ReadFiles(t.Context(), ms, func(int, []byte, error) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 {
		t.Fatalf("ReadFiles whose fn fails: %v after %d calls, want %v after 1", err, calls, stop)
	}
	if e.meta.batches != 2 { // only the missing and damaged bodies, which were never cached
		t.Errorf("second ReadFiles: %d requests in all, want 2", e.meta.batches)
	}
}

// TestReadFilesKeepsCache reads more inline bodies in bulk than the cache
// holds, twice: the bodies cached before stay cached, and so do the ones
// the first pass found room for.
func TestReadFilesKeepsCache(t *testing.T) {
	e := newEnv(t, content.Options{InlineMax: 1 << 10, CacheBytes: 4 << 10})
	var ms []content.Manifest
	for i := range 16 {
		ms = append(ms, e.write(t, randomBytes(uint64(i), 1000)))
	}
	s := e.reopen()
	hot := ms[:1]
	read := func(ms []content.Manifest) {
		t.Helper()
		if err := s.ReadFiles(t.Context(), ms, func(i int, _ []byte, err error) error { return err }); err != nil {
			t.Fatal(err)
		}
	}
	read(hot)
	e.meta.batches = 0
	for range 2 {
		for i := 1; i < len(ms); i += 4 {
			read(ms[i : i+4])
		}
	}
	if e.meta.batches != 8 { // each batch of each pass holds a body not cached
		t.Errorf("two bulk passes asked metadata %d times, want 8", e.meta.batches)
	}
	read(hot)
	read(ms[1:4]) // the first pass's bodies that fitted beside hot
	if e.meta.batches != 8 {
		t.Error("a bulk read larger than the cache evicted bodies cached before it")
	}
}

// TestReadFilesOnce reads a file of one chunk twice in bulk: each read
// gets the chunk from the blob store (a bulk read does not cache chunks).
func TestReadFilesOnce(t *testing.T) {
	e := newEnv(t, content.Options{InlineMax: 1 << 10})
	data := randomBytes(7, 5000)
	m := e.write(t, data)
	if len(m.Extents) != 1 || m.Inline {
		t.Fatalf("manifest %+v, want one chunk", m)
	}
	s := e.reopen()
	for i := range 2 {
		err := s.ReadFiles(t.Context(), []content.Manifest{m}, func(_ int, got []byte, err error) error {
			if err != nil || !bytes.Equal(got, data) {
				t.Fatalf("read %d: %d bytes, %v", i, len(got), err)
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if n := e.blobs.gets.Load(); n != 2 {
		t.Errorf("two bulk reads got the chunk %d times, want 2", n)
	}
}
