package storetest

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"

	forkspace "github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/meta"
)

// Kept is the content of Keep in the fixture's workspace.
const (
	Keep = "keep.txt"
	Kept = "acknowledged"
)

// Open opens a store (closed when the test ends) with workspace "w" of
// the given byte quota (0: none) holding Keep, and checkpoint "cp" of it.
func Open(tb testing.TB, quota int64) (*forkspace.Store, *forkspace.Workspace) {
	tb.Helper()
	ctx := context.Background()
	st, err := forkspace.Open(ctx, forkspace.Options{Dir: filepath.Join(tb.TempDir(), "store"), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { st.Close() })
	ws, err := st.Create(ctx, "w", forkspace.CreateOptions{Quota: meta.Quota{MaxBytes: quota}})
	if err != nil {
		tb.Fatal(err)
	}
	if err := ws.WriteFile(ctx, Keep, []byte(Kept), 0o644); err != nil {
		tb.Fatal(err)
	}
	if _, err := ws.Checkpoint(ctx, "cp"); err != nil {
		tb.Fatal(err)
	}
	return st, ws
}

// Unchanged fails the test unless Keep still holds Kept.
func Unchanged(tb testing.TB, ws *forkspace.Workspace, what string) {
	tb.Helper()
	if b, err := ws.ReadFile(context.Background(), Keep); err != nil || string(b) != Kept {
		tb.Fatalf("%s: %s is %q, %v", what, Keep, b, err)
	}
}
