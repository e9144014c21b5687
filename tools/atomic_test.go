package tools_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"strings"
	"testing"

	forkspace "github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/provider"
	"github.com/forkspace/forkspace/provider/localprovider"
	"github.com/forkspace/forkspace/tools"
)

// TestWriteRefusedChangesNothing (issue 10, bad input): a write or an
// edit past the quota leaves the file as it was, and a refused new file
// leaves neither the file nor the directories made for it.
func TestWriteRefusedChangesNothing(t *testing.T) {
	ctx := context.Background()
	st, err := forkspace.Open(ctx, forkspace.Options{Dir: filepath.Join(t.TempDir(), "store"), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	if _, err := st.Create(ctx, "q", forkspace.CreateOptions{Quota: meta.Quota{MaxBytes: 1000}}); err != nil {
		t.Fatal(err)
	}
	ws, _, err := localprovider.New(st, localprovider.Options{}).Open(ctx, localprovider.Config{Workspace: "q"}, provider.Session{ID: "s"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{t: t, ws: ws, set: tools.New(tools.Options{})}
	old := "first\n" + strings.Repeat("keep\n", 120)
	e.ok("write", M{"path": "keep.txt", "content": old})
	before := e.ok("ls", M{"path": "/"})

	e.fails("write", M{"path": "keep.txt", "content": strings.Repeat("x", 5000)}, "quota")
	e.fails("write", M{"path": "new/dir/big.bin", "content": strings.Repeat("x", 5000)}, "quota")
	e.fails("edit", M{"path": "keep.txt", "edits": []M{{"old_text": "first\n", "new_text": strings.Repeat("y", 2000)}}}, "quota")
	if got := e.get("keep.txt"); got != old {
		t.Fatalf("keep.txt holds %d bytes after refused writes", len(got))
	}
	if after := e.ok("ls", M{"path": "/"}); after != before {
		t.Fatalf("root after refused writes:\n%s\nbefore:\n%s", after, before)
	}
}
