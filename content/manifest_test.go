package content_test

import (
	"bytes"
	"errors"
	"reflect"
	"testing"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/content"
	"github.com/forkspace/forkspace/errdefs"
)

func manifests() []content.Manifest {
	h1, h2 := cas.Sum([]byte("one")), cas.Sum([]byte("two"))
	return []content.Manifest{
		{},
		{Size: 3, Inline: true, Extents: []content.Extent{{Hash: h1, Size: 3}}},
		{Size: 1 << 40, Extents: []content.Extent{{Size: 1 << 40}}},
		{Size: 300, Extents: []content.Extent{{Hash: h1, Size: 100}, {Size: 50}, {Hash: h2, Size: 100}, {Hash: h1, Size: 50}}},
	}
}

func TestManifestRoundTrip(t *testing.T) {
	for _, m := range manifests() {
		got, err := content.Decode(m.Encode())
		if err != nil {
			t.Fatalf("decode %+v: %v", m, err)
		}
		if !reflect.DeepEqual(got, m) {
			t.Fatalf("round trip: got %+v, want %+v", got, m)
		}
	}
}

func TestDecodeRejects(t *testing.T) {
	h := cas.Sum([]byte("x"))
	valid := content.Manifest{Size: 10, Extents: []content.Extent{{Hash: h, Size: 10}}}.Encode()
	tests := []struct {
		name string
		b    []byte
	}{
		{"empty", nil},
		{"bad version", append([]byte{2}, valid[1:]...)},
		{"unknown flag", append([]byte{1, 2}, valid[2:]...)},
		{"truncated", valid[:len(valid)-1]},
		{"trailing", append(bytes.Clone(valid), 0)},
		{"short extents", content.Manifest{Size: 11, Extents: []content.Extent{{Hash: h, Size: 10}}}.Encode()},
		{"empty extent", content.Manifest{Size: 10, Extents: []content.Extent{{Hash: h, Size: 10}, {Hash: h, Size: 0}}}.Encode()},
		{"adjacent holes", content.Manifest{Size: 10, Extents: []content.Extent{{Size: 5}, {Size: 5}}}.Encode()},
		{"inline hole", content.Manifest{Size: 10, Inline: true, Extents: []content.Extent{{Size: 10}}}.Encode()},
		{"inline two bodies", content.Manifest{Size: 10, Inline: true, Extents: []content.Extent{{Hash: h, Size: 5}, {Hash: h, Size: 5}}}.Encode()},
		{"overlong varint", []byte{1, 0x80, 0x00, 0, 0}},
		{"huge count", []byte{1, 0, 10, 0xff, 0xff, 0xff, 0xff, 0x0f}},
		{"zero chunk hash", append([]byte{1, 0, 10, 1, 21}, make([]byte, 32)...)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := content.Decode(tt.b); !errors.Is(err, errdefs.ErrCorrupt) {
				t.Fatalf("decode: %v, want errdefs.ErrCorrupt", err)
			}
		})
	}
}

func FuzzDecode(f *testing.F) {
	for _, m := range manifests() {
		f.Add(m.Encode())
	}
	f.Add([]byte{1, 0, 10, 0xff, 0xff, 0xff, 0xff, 0x0f})
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := content.Decode(b)
		if err != nil {
			if !errors.Is(err, errdefs.ErrCorrupt) {
				t.Fatalf("decode error %v does not wrap errdefs.ErrCorrupt", err)
			}
			return
		}
		if !bytes.Equal(m.Encode(), b) {
			t.Fatalf("decoded manifest re-encodes differently: %x vs %x", m.Encode(), b)
		}
		var sum int64
		for _, e := range m.Extents {
			sum += e.Size
		}
		if sum != m.Size {
			t.Fatalf("extents sum to %d, size %d", sum, m.Size)
		}
	})
}
