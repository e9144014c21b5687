package sqlitemeta_test

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/meta/metatest"
	"github.com/forkspace/forkspace/meta/sqlitemeta"
)

// quiet discards the store's log.
var quiet = slog.New(slog.DiscardHandler)

// openAt opens the database at path for the test and closes it when the
// test ends.
func openAt(tb testing.TB, path string) *sqlitemeta.Store {
	tb.Helper()
	s, err := sqlitemeta.Open(context.Background(), path, sqlitemeta.Options{Logger: quiet})
	if err != nil {
		tb.Fatalf("Open: %v", err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil && !errors.Is(err, fs.ErrClosed) {
			tb.Errorf("Close: %v", err)
		}
	})
	return s
}

// openTemp opens a new database file in a temporary directory.
func openTemp(tb testing.TB) *sqlitemeta.Store {
	return openAt(tb, filepath.Join(tb.TempDir(), "meta.db"))
}

func TestConformance(t *testing.T) {
	metatest.Run(t, func(t *testing.T) meta.Store { return openTemp(t) })
}

func TestCopy(t *testing.T) {
	metatest.RunCopy(t, func(t *testing.T) meta.Store { return openTemp(t) })
}

func TestReopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "meta.db")
	metatest.RunReopen(t, func(t *testing.T) meta.Store { return openAt(t, path) })
}

func benchOpen(b *testing.B) meta.Store { return openTemp(b) }

func BenchmarkUpdate(b *testing.B) { metatest.BenchmarkUpdate(b, benchOpen) }

// BenchmarkUpdateParallel also reports the mean group-commit batch size.
func BenchmarkUpdateParallel(b *testing.B) {
	var s *sqlitemeta.Store
	metatest.BenchmarkUpdateParallel(b, func(b *testing.B) meta.Store {
		s = openTemp(b)
		return s
	})
	if st := s.Stats(); st.Commits > 0 {
		b.ReportMetric(float64(st.Updates)/float64(st.Commits), "updates/commit")
	}
}

func BenchmarkGetNode(b *testing.B)    { metatest.BenchmarkGetNode(b, benchOpen) }
func BenchmarkStaged(b *testing.B)     { metatest.BenchmarkStaged(b, benchOpen) }
func BenchmarkView(b *testing.B)       { metatest.BenchmarkView(b, benchOpen) }
func BenchmarkUpdateRows(b *testing.B) { metatest.BenchmarkUpdateRows(b, benchOpen) }
func BenchmarkPutNodes(b *testing.B)   { metatest.BenchmarkPutNodes(b, benchOpen) }

// TestSync: Sync makes committed transactions durable (fsyncs the WAL);
// it works on a store with and without a WAL and fails after Close.
func TestSync(t *testing.T) {
	ctx := context.Background()
	s := openTemp(t)
	if err := s.Sync(ctx); err != nil {
		t.Fatalf("sync of a fresh store: %v", err)
	}
	if err := s.Update(ctx, func(tx meta.Tx) error {
		_, err := tx.Allocate("sync-test", 1)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := s.Sync(ctx); err != nil {
		t.Fatalf("sync after a commit: %v", err)
	}
	var _ meta.Syncer = s
	s.Close()
	if err := s.Sync(ctx); !errors.Is(err, fs.ErrClosed) {
		t.Fatalf("sync after Close: %v, want fs.ErrClosed", err)
	}
}
