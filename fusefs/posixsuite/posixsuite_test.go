package posixsuite

import (
	"os"
	"testing"

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
