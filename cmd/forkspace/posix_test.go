package main

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/forkspace/forkspace/fusefs/fusetest"
	"github.com/forkspace/forkspace/fusefs/posixsuite"
	"github.com/forkspace/forkspace/internal/citest"
)

// TestFusePOSIX runs the POSIX conformance suite (fusefs/posixsuite)
// against 'forkspace fuse mount --allow-other' as root: zero failures, as
// on ext4 (posixsuite's TestHostFS runs the same cases there).
func TestFusePOSIX(t *testing.T) {
	c, dir := posixStore(t)
	posixsuite.OpenParents(t, dir)
	c.start("mounted", "fuse", "mount", "w", dir, "--allow-other")
	posixsuite.Run(t, dir)
}

// TestServeFusePOSIX runs the suite again in a workspace's directory
// under 'serve --fuse', whose mount serves every workspace of the store.
func TestServeFusePOSIX(t *testing.T) {
	c, dir := posixStore(t)
	posixsuite.OpenParents(t, dir)
	c.start("serving MCP", "serve", "--addr", "127.0.0.1:0", "--fuse", dir, "--fuse-allow-other")
	posixsuite.Run(t, filepath.Join(dir, "w"))
}

// TestFusePOSIXReadOnly runs the suite's read-only cases (EROFS for every
// change, reads still served) on a --read-only mount, a checkpoint's
// mount and a checkpoint under .forkspace/checkpoints of a live mount.
func TestFusePOSIXReadOnly(t *testing.T) {
	c, dir := posixStore(t)
	d := c.start("mounted", "fuse", "mount", "w", dir)
	posixsuite.ReadOnlyFixture(t, dir)
	d.stop()
	c.ok(nil, "-w", "w", "checkpoint", "cp")

	for _, m := range []struct {
		name string
		args []string
		sub  string
	}{
		{"read-only", []string{"w", "--read-only"}, ""},
		{"checkpoint", []string{"w@cp"}, ""},
		{"checkpoints-dir", []string{"w"}, ".forkspace/checkpoints/cp"},
	} {
		t.Run(m.name, func(t *testing.T) {
			dir := t.TempDir()
			d := c.start("mounted", append(append([]string{"fuse", "mount"}, m.args[0], dir), m.args[1:]...)...)
			posixsuite.RunReadOnly(t, filepath.Join(dir, m.sub))
			d.stop()
		})
	}
}

// posixStore checks what the suite needs (FUSE, root) and returns a CLI
// on a store with workspace w, and a directory to mount it at.
func posixStore(t *testing.T) (*cli, string) {
	fusetest.Require(t)
	if os.Geteuid() != 0 {
		citest.Missing(t, "the POSIX suite needs root")
	}
	c := newCLI(t)
	c.ok(nil, "workspace", "create", "w")
	return c, t.TempDir()
}
