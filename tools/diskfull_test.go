package tools_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	forkspace "github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/blob/fileblob"
	"github.com/forkspace/forkspace/internal/disktest"
	"github.com/forkspace/forkspace/provider"
	"github.com/forkspace/forkspace/provider/localprovider"
	"github.com/forkspace/forkspace/tools"
)

// TestDiskFullMessages fills a real 3 MiB tmpfs under the store's blobs
// with a write tool call: the model is told the store is out of disk space, not
// "record audit entry …" nor the host path of a blob's temporary file, and
// the history tool shows that failed step the same way (its audit entry
// recorded the raw error, host path included).
func TestDiskFullMessages(t *testing.T) {
	ctx := context.Background()
	// The blobs fill the disk; the metadata (the audit log) has room.
	dir := filepath.Join(disktest.Small(t, 3<<20), "blobs")
	blobs, err := fileblob.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	st, err := forkspace.Open(ctx, forkspace.Options{Dir: t.TempDir(), Blobs: blobs, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := st.Create(ctx, "w", forkspace.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	ws, _, err := localprovider.New(st, localprovider.Options{}).Open(ctx, localprovider.Config{Workspace: "w"}, provider.Session{ID: "s"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, ws: ws, set: tools.New(tools.Options{Recorder: st.AuditLog()})}
	big := disktest.Filler(4 << 20)
	clean := func(what, text string) {
		t.Helper()
		if strings.Contains(text, dir) || strings.Contains(text, "/tmp") || strings.Contains(text, "record audit entry") || strings.Contains(text, "put blob") {
			t.Errorf("%s shows internals: %s", what, text)
		}
	}
	clean("write to a full disk", e.fails("write", M{"path": "big.txt", "content": string(big)}, "out of disk space"))
	e.ok("write", M{"path": "small.txt", "content": "fits\n"})
	res := e.call("history", M{})
	if res.IsError || !strings.Contains(res.Text, "write  failed (nothing changed): the store is out of disk space") {
		t.Fatalf("history:\n%s", res.Text)
	}
	clean("history", res.Text)
	data, err := json.Marshal(res.Structured)
	if err != nil {
		t.Fatal(err)
	}
	clean("history's structured result", string(data))
}
