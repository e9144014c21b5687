package vfs_test

import (
	"testing"

	"github.com/forkspace/forkspace/vfs"
	"github.com/forkspace/forkspace/vfs/vfstest"
)

func TestConformance(t *testing.T) {
	vfstest.Run(t, newFS)
}

// TestConformanceFolding runs the suite with a fold after every few staged
// keys, so reads mix tree and overlay.
func TestConformanceFolding(t *testing.T) {
	vfstest.Run(t, func(t *testing.T) *vfs.FS {
		e := newEnv(t, vfs.Options{FoldRows: 7})
		return e.open(e.ws)
	})
}
