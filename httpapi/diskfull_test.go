package httpapi_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/httpapi"
	"github.com/forkspace/forkspace/internal/disktest"
)

// TestDiskFullNamesNoHostPath: a write that fills the server's disk (a
// real 3 MiB tmpfs under the store) fails for the client without the host
// path of the blob file the server could not write.
func TestDiskFullNamesNoHostPath(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(disktest.Small(t, 3<<20), "store")
	st, err := forkspace.Open(ctx, forkspace.Options{Dir: dir, Logger: quiet})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	c, err := httpapi.NewClient(newServed(t, httpapi.NewLocal(st, httpapi.LocalOptions{Audit: st.AuditLog()}), httpapi.Options{}), httpapi.ClientOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.CreateWorkspace(ctx, httpapi.CreateRequest{Name: "w"})
	must(t, err)
	_, err = c.Write(ctx, "w", "big.bin", bytes.NewReader(disktest.Filler(4<<20)), httpapi.WriteRequest{})
	if err == nil || !strings.Contains(err.Error(), "no space left on device") {
		t.Fatalf("write to a full disk: %v", err)
	}
	if strings.Contains(err.Error(), dir) || strings.Contains(err.Error(), "/tmp") {
		t.Fatalf("the client is shown a host path: %v", err)
	}
}
