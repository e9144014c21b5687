package fusefs_test

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"golang.org/x/sys/unix"
)

// TestReadSeesOtherDescriptorsWrites: what one descriptor wrote and has
// not closed is visible at once through another descriptor of the same
// file, opened before or after the write, in its size and its bytes
// (git's index-pack reads the pack it is still writing through
// descriptors of its own; it failed with "premature end of pack file").
func TestReadSeesOtherDescriptorsWrites(t *testing.T) {
	_, dir := newMount(t)
	p := filepath.Join(dir, "pack")
	w, err := os.OpenFile(p, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o444)
	ok(t, err)
	defer w.Close()
	early, err := os.Open(p)
	ok(t, err)
	defer early.Close()
	var want []byte
	for i := range 40 {
		chunk := bytes.Repeat([]byte{byte('a' + i%26)}, 40_000+i)
		_, err := w.Write(chunk)
		ok(t, err)
		want = append(want, chunk...)
		late, err := os.Open(p)
		ok(t, err)
		for _, r := range []*os.File{early, late} {
			var st unix.Stat_t
			ok(t, unix.Fstat(int(r.Fd()), &st))
			if st.Size != int64(len(want)) {
				t.Fatalf("after write %d: fstat of a reader says %d bytes, want %d", i, st.Size, len(want))
			}
			off := int64(len(want) - len(chunk) - 7)
			if off < 0 {
				off = 0
			}
			got := make([]byte, int64(len(want))-off)
			n, err := r.ReadAt(got, off)
			if n != len(got) || !bytes.Equal(got, want[off:]) {
				t.Fatalf("after write %d: pread of %d bytes at %d through a reader = %d bytes, %v", i, len(got), off, n, err)
			}
		}
		ok(t, late.Close())
	}
}
