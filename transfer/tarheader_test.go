package transfer

import (
	"archive/tar"
	"bytes"
	"context"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"time"
)

// TestTarHeadersMatch encodes random headers of the shapes an export
// writes, plain and unusual, and compares every byte with what
// archive/tar's Writer writes for them (or that both refuse them).
func TestTarHeadersMatch(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	var enc tarHeaders
	for i := range 20000 {
		h := randomHeader(r)
		got, gotErr := enc.encode(h)
		var want bytes.Buffer
		wantErr := tar.NewWriter(&want).WriteHeader(h)
		if (gotErr != nil) != (wantErr != nil) || gotErr == nil && !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("case %d: %+v\nencode: %d bytes, %v\narchive/tar: %d bytes, %v", i, h, len(got), gotErr, want.Len(), wantErr)
		}
	}
}

// FuzzTarHeaders encodes headers built from fuzzed names, link
// targets, ids, sizes, times and an xattr, and compares every byte with
// archive/tar's Writer (or that both refuse them).
func FuzzTarHeaders(f *testing.F) {
	f.Add("dir/file.go", "", byte(0), int64(0o644), int64(1000), int64(4096), int64(1700000000), int64(123), "user.k", "v")
	f.Add(strings.Repeat("x", 101), "t", byte(1), int64(0o7777), int64(1<<21), int64(0), int64(-5), int64(0), "", "")
	f.Add("ünï", strings.Repeat("l", 120), byte(2), int64(0), int64(0), int64(1<<33), int64(0), int64(999999999), "user.nul\x00", "with\x00nul")
	f.Fuzz(func(t *testing.T, name, link string, kind byte, mode, id, size, sec, nsec int64, xk, xv string) {
		h := &tar.Header{Name: name, Mode: mode, Uid: int(id), Gid: int(id / 2), Format: tar.FormatPAX,
			ModTime: time.Unix(sec, nsec), AccessTime: time.Unix(sec/2, nsec/2)}
		switch kind % 4 {
		case 0:
			h.Typeflag, h.Size = tar.TypeReg, size
		case 1:
			h.Typeflag, h.Linkname = tar.TypeSymlink, link
		case 2:
			h.Typeflag, h.Linkname = tar.TypeLink, link
		default:
			h.Typeflag = tar.TypeDir
		}
		if xk != "" {
			h.PAXRecords = map[string]string{xattrPrefix + xk: xv}
		}
		var enc tarHeaders
		got, gotErr := enc.encode(h)
		var want bytes.Buffer
		wantErr := tar.NewWriter(&want).WriteHeader(h)
		if (gotErr != nil) != (wantErr != nil) || gotErr == nil && !bytes.Equal(got, want.Bytes()) {
			t.Fatalf("%+v\nencode: %d bytes, %v\narchive/tar: %d bytes, %v", h, len(got), gotErr, want.Len(), wantErr)
		}
	})
}

// TestTarSinkStream writes entries with bodies through tarSink and
// through archive/tar's Writer: the streams are equal, and a body shorter
// or longer than its size fails.
func TestTarSinkStream(t *testing.T) {
	ctx := context.Background()
	mt := time.Unix(1700000000, 123456789)
	entries := []*entry{
		{name: ".", kind: kindDir},
		{name: "d", kind: kindDir, mode: 0o755, mtime: mt, atime: mt},
		{name: "d/a", kind: kindFile, mode: 0o644, mtime: mt, size: 700, xattrs: map[string][]byte{"user.k": []byte("v\x00w")}},
		{name: "d/b", kind: kindFile, mode: 0o600, mtime: time.Unix(5, 0), size: 512},
		{name: "d/" + strings.Repeat("é", 80), kind: kindFile, mode: 0o644, mtime: mt, atime: mt, size: 1},
		{name: "d/l", kind: kindSymlink, target: "a"},
		{name: "d/h", kind: kindHardlink, target: "d/a"},
		{name: "e", kind: kindFile, size: 0, uid: 1 << 22},
	}
	var got bytes.Buffer
	s := newTarSink(&got, false)
	var want bytes.Buffer
	tw := tar.NewWriter(&want)
	for i, e := range entries {
		body := func() io.Reader { return bytes.NewReader(pattern(int(e.size), byte(i))) }
		if e.kind != kindFile {
			body = func() io.Reader { return nil }
		}
		if err := s.put(ctx, e, body()); err != nil {
			t.Fatalf("put %s: %v", e.name, err)
		}
		if e.name == "." {
			continue
		}
		h := *s.header(e)
		if err := tw.WriteHeader(&h); err != nil {
			t.Fatal(err)
		}
		if b := body(); b != nil {
			if _, err := io.Copy(tw, b); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := s.finish(ctx); err != nil {
		t.Fatal(err)
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Fatalf("tarSink wrote %d bytes, archive/tar %d, not the same", got.Len(), want.Len())
	}
	for _, n := range []int{99, 101} {
		s := newTarSink(io.Discard, false)
		e := &entry{name: "f", kind: kindFile, size: 100}
		if err := s.put(ctx, e, bytes.NewReader(make([]byte, n))); err == nil {
			t.Errorf("a body of %d bytes for a size of 100 was written", n)
		}
	}
}

func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i*31)
	}
	return b
}

// randomHeader returns a header as tarSink builds them, with names,
// ids, sizes, times and xattrs drawn from plain and edge values.
func randomHeader(r *rand.Rand) *tar.Header {
	pick := func(xs ...string) string { return xs[r.IntN(len(xs))] }
	name := pick("a", "dir/file.go", "d/e/f", "a.b", strings.Repeat("x", 99), strings.Repeat("x", 100), strings.Repeat("y/", 50), strings.Repeat("z", 101),
		"ünïcode", "sp ace/"+strings.Repeat("q", 90), strings.Repeat("d/", 45)+"PaxHeaders", "")
	h := &tar.Header{Name: name, Mode: int64(r.IntN(0o10000)), Format: tar.FormatPAX}
	switch r.IntN(4) {
	case 0:
		h.Typeflag, h.Name = tar.TypeDir, name+"/"
	case 1:
		h.Typeflag, h.Linkname = tar.TypeSymlink, pick("t", "../up", strings.Repeat("l", 100), strings.Repeat("m", 120), "ß")
	case 2:
		h.Typeflag, h.Linkname = tar.TypeLink, pick("a", strings.Repeat("k", 101))
	default:
		h.Typeflag = tar.TypeReg
		h.Size = []int64{0, 1, 511, 512, 513, 4096, 1 << 33, 1<<33 - 1}[r.IntN(8)]
	}
	ids := []int{0, 0, 1000, 1000, 1<<21 - 1, 1 << 21, 1 << 30}
	h.Uid, h.Gid = ids[r.IntN(len(ids))], ids[r.IntN(len(ids))]
	h.ModTime, h.AccessTime = randomTime(r), randomTime(r)
	if h.ModTime.IsZero() && r.IntN(2) == 0 {
		h.ModTime = time.Unix(0, 0)
	}
	if n := r.IntN(6) - 2; n > 0 {
		h.PAXRecords = map[string]string{}
		for range n {
			k := pick("user.a", "user.b", "user.c", "user.long."+strings.Repeat("n", 200), "user.x=y", "user.nul\x00", "trusted.t", "user.")
			h.PAXRecords[xattrPrefix+k] = pick("", "v", "with\x00nul", strings.Repeat("w", 1000), "ünï")
		}
	}
	return h
}

func randomTime(r *rand.Rand) time.Time {
	switch r.IntN(10) {
	case 0, 7:
		return time.Time{}
	case 1:
		return time.Unix(int64(r.IntN(2e9)), 0)
	case 2:
		return time.Unix(int64(r.IntN(2e9)), int64(r.IntN(1e9)))
	case 3:
		return time.Unix(int64(r.IntN(2e9)), int64(r.IntN(1000))*1e6) // trailing zeros
	case 4:
		return time.Unix(-int64(r.IntN(1e9))-1, int64(r.IntN(1e9)))
	case 5:
		return time.Unix(1<<33+int64(r.IntN(100)), int64(r.IntN(2))*5)
	case 6:
		return time.Unix(1<<33-1, 999999999)
	}
	return time.Unix(int64(r.IntN(2e9)), int64(r.IntN(1e9)))
}

// BenchmarkTarHeaders encodes an export's typical header (PAX atime and
// mtime records) with tarHeaders and with archive/tar.
func BenchmarkTarHeaders(b *testing.B) {
	h := &tar.Header{Name: "src/cmd/go/internal/load/pkg.go", Mode: 0o644, Uid: 1000, Gid: 1000, Size: 12345,
		ModTime: time.Unix(1700000000, 123456789), AccessTime: time.Unix(1700000001, 987654321),
		Typeflag: tar.TypeReg, Format: tar.FormatPAX}
	b.Run("encode", func(b *testing.B) {
		var enc tarHeaders
		b.ReportAllocs()
		for b.Loop() {
			if _, err := enc.encode(h); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("archive-tar", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			tw := tar.NewWriter(io.Discard)
			if err := tw.WriteHeader(h); err != nil {
				b.Fatal(err)
			}
		}
	})
}
