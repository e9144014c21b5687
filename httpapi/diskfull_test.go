package httpapi_test

import (
	"bytes"
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/audit"
	"github.com/forkspace/forkspace/blob/fileblob"
	"github.com/forkspace/forkspace/httpapi"
	"github.com/forkspace/forkspace/internal/disktest"
)

// TestDiskFullNamesNoHostPath: a write that fills the server's disk (a
// real 3 MiB tmpfs under the store's blobs) fails for the client without
// the host path of the blob file the server could not write, and the
// history and the audit log show the failed step without it too.
func TestDiskFullNamesNoHostPath(t *testing.T) {
	ctx := context.Background()
	// The blobs fill the disk; the metadata (the audit log) has room.
	dir := filepath.Join(disktest.Small(t, 3<<20), "blobs")
	blobs, err := fileblob.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := forkspace.Open(ctx, forkspace.Options{Dir: t.TempDir(), Blobs: blobs, Logger: quiet})
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
	// The step's audit entry recorded the error as it was; the history
	// and the audit log show it to the client without the host path.
	steps, err := c.History(ctx, "w", forkspace.HistoryOptions{})
	must(t, err)
	es, err := c.Audit(ctx, "w", audit.Filter{})
	must(t, err)
	if len(steps) == 0 || len(es) == 0 {
		t.Fatalf("history %+v, audit log %+v: want the failed write", steps, es)
	}
	for _, shown := range []string{steps[0].Error, es[0].Error} {
		if !strings.Contains(shown, "no space left on device") || strings.Contains(shown, dir) || strings.Contains(shown, "/tmp") {
			t.Errorf("a recorded step's error shown to the client: %q", shown)
		}
	}
}
