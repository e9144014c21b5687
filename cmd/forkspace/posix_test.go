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
	fusetest.Require(t)
	if os.Geteuid() != 0 {
		citest.Missing(t, "the POSIX suite needs root")
	}
	c := newCLI(t)
	c.ok(nil, "workspace", "create", "w")
	dir := t.TempDir()
	posixsuite.OpenParents(t, dir)
	c.start("mounted", "fuse", "mount", "w", dir, "--allow-other")
	posixsuite.Run(t, dir)
}

// TestServeFusePOSIX runs the suite again in a workspace's directory
// under 'serve --fuse', whose mount serves every workspace of the store.
func TestServeFusePOSIX(t *testing.T) {
	fusetest.Require(t)
	if os.Geteuid() != 0 {
		citest.Missing(t, "the POSIX suite needs root")
	}
	c := newCLI(t)
	c.ok(nil, "workspace", "create", "w")
	dir := t.TempDir()
	posixsuite.OpenParents(t, dir)
	c.start("serving MCP", "serve", "--addr", "127.0.0.1:0", "--fuse", dir, "--fuse-allow-other")
	posixsuite.Run(t, filepath.Join(dir, "w"))
}
