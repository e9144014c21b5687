package posixsuite

import (
	"os"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/forkspace/forkspace/internal/citest"
)

func TestMain(m *testing.M) {
	ServeChild()
	code := m.Run()
	Cleanup()
	os.Exit(code)
}

// TestHostFS runs the suite on the host's file system (ext4 on the
// project's machines): every expectation must hold there, or it is not
// Linux's behaviour.
func TestHostFS(t *testing.T) {
	if os.Geteuid() != 0 {
		citest.Missing(t, "the POSIX suite needs root")
	}
	dir := t.TempDir()
	OpenParents(t, dir)
	Run(t, dir)
}

// TestHostFSReadOnly runs RunReadOnly on a read-only bind mount of a
// directory of the host's file system.
func TestHostFSReadOnly(t *testing.T) {
	if os.Geteuid() != 0 {
		citest.Missing(t, "the POSIX suite needs root")
	}
	src, dir := t.TempDir(), t.TempDir()
	ReadOnlyFixture(t, src)
	if err := unix.Mount(src, dir, "", unix.MS_BIND, ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := unix.Unmount(dir, unix.MNT_DETACH); err != nil {
			t.Error(err)
		}
	})
	if err := unix.Mount("", dir, "", unix.MS_BIND|unix.MS_REMOUNT|unix.MS_RDONLY, ""); err != nil {
		t.Fatal(err)
	}
	RunReadOnly(t, dir)
}
