package pgmeta_test

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"testing"

	"github.com/forkspace/forkspace/internal/pgtest"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/meta/metatest"
	"github.com/forkspace/forkspace/meta/pgmeta"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// quiet discards the store's log.
var quiet = slog.New(slog.DiscardHandler)

// openAt opens the database at url for the test and closes it when the
// test ends.
func openAt(tb testing.TB, url string) *pgmeta.Store {
	tb.Helper()
	s, err := pgmeta.Open(context.Background(), url, pgmeta.Options{Logger: quiet})
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

// openFresh opens a new, empty database.
func openFresh(tb testing.TB) *pgmeta.Store { return openAt(tb, pgtest.DB(tb)) }

func TestConformance(t *testing.T) {
	metatest.Run(t, func(t *testing.T) meta.Store { return openFresh(t) })
}

func TestCopy(t *testing.T) {
	metatest.RunCopy(t, func(t *testing.T) meta.Store { return openFresh(t) })
}

func TestReopen(t *testing.T) {
	url := pgtest.DB(t)
	metatest.RunReopen(t, func(t *testing.T) meta.Store { return openAt(t, url) })
}
