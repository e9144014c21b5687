package disktest

import (
	"fmt"
	"math/rand/v2"
	"os"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/forkspace/forkspace/internal/citest"
)

// Small mounts a tmpfs of size bytes on a new temporary directory and
// returns it; it is unmounted when the test ends. Mounting needs root:
// without it the test fails under CI (CI=true) and is skipped elsewhere.
func Small(tb testing.TB, size int) string {
	tb.Helper()
	if os.Geteuid() != 0 {
		citest.Missing(tb, "mounting a small tmpfs needs root")
	}
	dir := tb.TempDir()
	if err := unix.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%d", size)); err != nil {
		tb.Fatalf("mount tmpfs: %v", err)
	}
	tb.Cleanup(func() {
		if err := unix.Unmount(dir, 0); err != nil {
			tb.Errorf("unmount tmpfs: %v", err)
		}
	})
	return dir
}

// Filler returns n bytes that neither compress nor dedup (the same for
// the same n): written to a small disk, they fill it.
func Filler(n int) []byte {
	r := rand.New(rand.NewPCG(uint64(n), 1))
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + r.IntN(26))
	}
	return b
}
