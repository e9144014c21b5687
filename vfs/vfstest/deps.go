package vfstest

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/forkspace/forkspace/blob/fileblob"
	"github.com/forkspace/forkspace/chunk"
	"github.com/forkspace/forkspace/content"
	"github.com/forkspace/forkspace/kv"
	"github.com/forkspace/forkspace/meta/sqlitemeta"
	"github.com/forkspace/forkspace/vfs"
)

// OpenDeps opens the real store components under dir (an SQLite database
// and a blob directory, created if missing) and returns them as vfs.Deps.
// They are closed when the test ends; a test that simulates a restart may
// close Meta itself and call OpenDeps again on the same dir.
func OpenDeps(t testing.TB, dir string) vfs.Deps {
	t.Helper()
	m, err := sqlitemeta.Open(context.Background(), filepath.Join(dir, "meta.db"), sqlitemeta.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	blobs, err := fileblob.Open(filepath.Join(dir, "blobs"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = m.Close()
		_ = blobs.Close()
	})
	return vfs.Deps{
		Meta:    m,
		KV:      kv.New(m, kv.Options{}),
		Content: content.New(content.Options{Blobs: blobs, Meta: m, Params: chunk.DefaultParams, Defer: true}),
	}
}
