package vfs_test

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"
)

// TestWriteTo: io.Copy from a File (File.WriteTo) copies from the current
// offset to the end, for an inline file, one of several chunks and an
// offset past the end, and leaves the offset at the end.
func TestWriteTo(t *testing.T) {
	ctx := context.Background()
	f := newFS(t)
	big := strings.Repeat("0123456789abcdef", 40_000) // 640 KB: chunked, more than one buffer
	for _, tc := range []struct {
		name, data string
		off        int64
	}{{"small", "hello world", 6}, {"big", big, 1000}, {"past end", "abc", 10}, {"empty", "", 0}} {
		if err := f.WriteFile(ctx, tc.name, []byte(tc.data), 0o644); err != nil {
			t.Fatal(err)
		}
		h, err := f.Open(ctx, tc.name)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.Seek(tc.off, io.SeekStart); err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		n, err := io.Copy(&got, h)
		want := ""
		if tc.off < int64(len(tc.data)) {
			want = tc.data[tc.off:]
		}
		if err != nil || n != int64(len(want)) || got.String() != want {
			t.Errorf("%s: copied %d bytes, %v; equal %t", tc.name, n, err, got.String() == want)
		}
		if m, err := h.Read(make([]byte, 1)); m != 0 || err != io.EOF {
			t.Errorf("%s: read after the copy: %d, %v", tc.name, m, err)
		}
		h.Close()
	}
}
