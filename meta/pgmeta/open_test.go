package pgmeta_test

import (
	"context"
	"errors"
	"io/fs"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/internal/pgtest"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/meta/pgmeta"
	"github.com/jackc/pgx/v5"
)

// TestOpenConcurrent opens one new database from several stores at once:
// each succeeds and each migration is applied once (the advisory lock).
func TestOpenConcurrent(t *testing.T) {
	url := pgtest.DB(t)
	var wg sync.WaitGroup
	for range 6 {
		wg.Go(func() { openAt(t, url) })
	}
	wg.Wait()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var rows, versions int
	if err := conn.QueryRow(ctx, `SELECT COUNT(*), COUNT(DISTINCT version) FROM schema_migrations`).Scan(&rows, &versions); err != nil {
		t.Fatal(err)
	}
	if rows != versions || rows == 0 {
		t.Errorf("schema_migrations: %d rows of %d versions, want each version once", rows, versions)
	}
}

// TestOpenNewerSchema refuses a database a newer build migrated.
func TestOpenNewerSchema(t *testing.T) {
	url := pgtest.DB(t)
	s := openAt(t, url)
	s.Close()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, `INSERT INTO schema_migrations VALUES (999, 0)`); err != nil {
		t.Fatal(err)
	}
	_, err = pgmeta.Open(ctx, url, pgmeta.Options{Logger: quiet})
	if !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Open of a newer schema: %v, want ErrUnsupported", err)
	}
}

// TestOpenPassword refuses URLs holding a password, before connecting, and
// says to use the environment; other schemes are fs.ErrInvalid too.
func TestOpenPassword(t *testing.T) {
	for _, url := range []string{
		"postgres://user:secret@localhost/db",
		"postgresql://user:@localhost/db",
		"postgres://localhost/db?password=secret",
		"postgres:///db?host=/tmp&password=secret",
	} {
		_, err := pgmeta.Open(context.Background(), url, pgmeta.Options{Logger: quiet})
		if !errors.Is(err, fs.ErrInvalid) || !strings.Contains(err.Error(), "PGPASSWORD") {
			t.Errorf("Open(%q) = %v, want fs.ErrInvalid naming PGPASSWORD", url, err)
		}
		if err != nil && strings.Contains(err.Error(), "secret") {
			t.Errorf("Open(%q): the error shows the password: %v", url, err)
		}
	}
	for _, url := range []string{"mysql://localhost/db", "host=localhost dbname=db", "::"} {
		if _, err := pgmeta.Open(context.Background(), url, pgmeta.Options{Logger: quiet}); !errors.Is(err, fs.ErrInvalid) {
			t.Errorf("Open(%q) = %v, want fs.ErrInvalid", url, err)
		}
	}
}

// TestExclusive lets one Exclusive store have a database at a time; the
// lock goes with Close.
func TestExclusive(t *testing.T) {
	url := pgtest.DB(t)
	ctx := context.Background()
	opts := pgmeta.Options{Logger: quiet, Exclusive: true}
	a, err := pgmeta.Open(ctx, url, opts)
	if err != nil {
		t.Fatal(err)
	}
	if b, err := pgmeta.Open(ctx, url, opts); !errors.Is(err, errdefs.ErrBusy) {
		if b != nil {
			b.Close()
		}
		t.Fatalf("second exclusive Open: %v, want ErrBusy", err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := pgmeta.Open(ctx, url, opts)
	if err != nil {
		t.Fatalf("exclusive Open after Close: %v", err)
	}
	b.Close()
}

// TestUpdateSerializable runs read-modify-write Updates of one setting from
// several goroutines: each increment must count, which holds only if
// conflicting transactions are serialized (SERIALIZABLE) and the loser is
// run again rather than failed or committed over the winner.
func TestUpdateSerializable(t *testing.T) {
	s := openFresh(t)
	ctx := context.Background()
	const workers, rounds = 6, 15
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for range rounds {
				err := s.Update(ctx, func(tx meta.Tx) error {
					v, err := tx.Setting("n")
					if err != nil && !errors.Is(err, fs.ErrNotExist) {
						return err
					}
					n, _ := strconv.Atoi(v)
					return tx.SetSetting("n", strconv.Itoa(n+1))
				})
				if err != nil {
					t.Errorf("Update: %v", err)
				}
			}
		})
	}
	wg.Wait()
	err := s.View(ctx, func(tx meta.Tx) error {
		v, err := tx.Setting("n")
		if v != strconv.Itoa(workers*rounds) {
			t.Errorf("after %d increments the setting is %q (%v): increments were lost", workers*rounds, v, err)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// TestUnreachableIsNotMissing: with the server gone (its unix socket
// absent: ENOENT, as while it restarts), the failure is not
// fs.ErrNotExist, which callers read as a missing row.
func TestUnreachableIsNotMissing(t *testing.T) {
	ctx := context.Background()
	url := "postgres:///nowhere?host=" + t.TempDir() + "&user=" + pgtest.User + "&sslmode=disable&connect_timeout=2"
	s, err := pgmeta.Open(ctx, url, pgmeta.Options{Logger: quiet})
	if err == nil {
		defer s.Close()
		err = s.View(ctx, func(tx meta.Tx) error { _, err := tx.Workspace("w"); return err })
	}
	if err == nil || errors.Is(err, fs.ErrNotExist) {
		t.Errorf("an unreachable server: %v, want an error that is not fs.ErrNotExist", err)
	}
}
