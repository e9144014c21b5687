// Package fusetest holds what tests of real FUSE mounts share.
package fusetest

import (
	"os"
	"os/exec"
	"testing"

	"github.com/forkspace/forkspace/internal/citest"
)

// Require skips the test where a FUSE mount cannot be made (no /dev/fuse
// or no fusermount3); in CI (CI=true) that is a failure instead.
func Require(t testing.TB) {
	t.Helper()
	miss := ""
	if _, err := os.Stat("/dev/fuse"); err != nil {
		miss = "/dev/fuse"
	} else if _, err := exec.LookPath("fusermount3"); err != nil {
		miss = "fusermount3 (Debian package fuse3)"
	}
	if miss == "" {
		return
	}
	citest.Missing(t, "a real FUSE mount needs %s", miss)
}
