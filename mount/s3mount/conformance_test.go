package s3mount_test

import (
	"testing"

	"github.com/forkspace/forkspace/internal/s3test"
	"github.com/forkspace/forkspace/mount"
	"github.com/forkspace/forkspace/mount/mounttest"
)

// TestConformance runs the driver's conformance suite against versitygw,
// which checks signatures and honours If-Match and If-None-Match on puts
// and deletes (gofakes3 ignores a delete's precondition).
func TestConformance(t *testing.T) {
	mounttest.Run(t, func(t *testing.T) (mount.Mount, mounttest.Fixture) {
		files := map[string][]byte{
			"a.txt":          []byte("alpha"),
			"dir/b.txt":      []byte("bravo"),
			"dir/sub/c.bin":  {0, 1, 2, 255},
			"empty":          {},
			"with space.txt": []byte("space"),
		}
		srv := s3test.StartVersity(t, bucket)
		for p, b := range files {
			srv.Seed(t, bucket, "root/"+p, b)
		}
		srv.Seed(t, bucket, "rootless", []byte("outside the prefix"))
		return open(t, endpointOptions(srv.URL, "root")), mounttest.Fixture{Files: files, Writable: true, Preconditions: true}
	})
}
