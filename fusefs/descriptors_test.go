package fusefs_test

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/forkspace/forkspace/fusefs"
	"github.com/forkspace/forkspace/meta"
)

// TestReadSeesOtherDescriptorsWrites: what one descriptor wrote and has
// not closed is visible at once through another descriptor of the same
// file, opened before or after the write, in its size and its bytes
// (git's index-pack reads the pack it is still writing through
// descriptors of its own; it failed with "premature end of pack file").
//
// With caching off every open looks the name up again, as after a cache
// drop: the lookup must report the writer's size, not the committed one.
func TestReadSeesOtherDescriptorsWrites(t *testing.T) {
	for _, timeout := range []time.Duration{0, time.Nanosecond} {
		t.Run(fmt.Sprintf("cache %v", timeout), func(t *testing.T) {
			st := openStore(t)
			w := create(t, st, "w", meta.Quota{})
			readOtherDescriptors(t, mount(t, w.FS, fusefs.Options{CacheTimeout: timeout}))
		})
	}
}

func readOtherDescriptors(t *testing.T, dir string) {
	p := filepath.Join(dir, "pack")
	// Descriptors are closed by cleanups, which run before the unmount
	// (registered earlier): a descriptor left open by a failure would
	// keep the test process from exiting, its mount served by itself.
	open := func(flag int) *os.File {
		f, err := os.OpenFile(p, flag, 0o444)
		ok(t, err)
		t.Cleanup(func() { _ = f.Close() })
		return f
	}
	w := open(os.O_RDWR | os.O_CREATE | os.O_EXCL)
	early := open(os.O_RDONLY)
	var want []byte
	for i := range 40 {
		chunk := bytes.Repeat([]byte{byte('a' + i%26)}, 40_000+i)
		_, err := w.Write(chunk)
		ok(t, err)
		want = append(want, chunk...)
		late := open(os.O_RDONLY)
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
	}
}
