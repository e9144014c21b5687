package provider_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/meta/sqlitemeta"
)

func openMeta(t *testing.T) meta.Store {
	t.Helper()
	db, err := sqlitemeta.Open(context.Background(), filepath.Join(t.TempDir(), "meta.db"), sqlitemeta.Options{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	return db
}
