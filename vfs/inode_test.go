package vfs

import (
	"errors"
	"testing"

	"github.com/forkspace/forkspace/errdefs"
)

func TestAttrRoundTrip(t *testing.T) {
	for _, a := range []attr{
		{typ: typeFile, perm: 0o644, nlink: 1},
		{typ: typeDir, perm: 0o7777, uid: 1<<32 - 1, gid: 5, nlink: 1 << 20, size: 1<<62 + 7, atime: -1, mtime: 1<<62 + 3, ctime: -1 << 62, parent: 1<<64 - 1, name: "ü name"},
		{typ: typeSymlink, perm: 0o777, nlink: 1, size: 4096, parent: 1, name: string(make([]byte, MaxNameLen))},
	} {
		got, err := decodeAttr(encodeAttr(&a))
		if err != nil || got != a {
			t.Fatalf("round trip %+v: %+v %v", a, got, err)
		}
	}
}

// FuzzDecodeAttr: damaged records are errdefs.ErrCorrupt, never a panic,
// and whatever decodes re-encodes to the same bytes.
func FuzzDecodeAttr(f *testing.F) {
	f.Add(encodeAttr(&attr{typ: typeFile, perm: 0o644, nlink: 1, name: "f", parent: 1}))
	f.Add(encodeAttr(&attr{typ: typeDir, perm: 0o755, nlink: 2, mtime: 1700000000000000000}))
	f.Add([]byte{})
	f.Add([]byte{attrVersion, 9})
	f.Add([]byte{attrVersion, byte(typeFile), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01})
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := decodeAttr(b)
		if err != nil {
			if !errors.Is(err, errdefs.ErrCorrupt) {
				t.Fatalf("decode error %v is not ErrCorrupt", err)
			}
			return
		}
		again, err := decodeAttr(encodeAttr(&a))
		if err != nil || again != a {
			t.Fatalf("re-encode: %+v -> %+v %v", a, again, err)
		}
	})
}

func FuzzDecodeDirent(f *testing.F) {
	f.Add(encodeDirent(42, typeDir))
	f.Add([]byte{1, 2, 3})
	f.Fuzz(func(t *testing.T, b []byte) {
		d, err := decodeDirent(b)
		if err != nil {
			if !errors.Is(err, errdefs.ErrCorrupt) {
				t.Fatalf("decode error %v is not ErrCorrupt", err)
			}
			return
		}
		if string(encodeDirent(d.ino, d.typ)) != string(b) {
			t.Fatalf("re-encode differs")
		}
	})
}
