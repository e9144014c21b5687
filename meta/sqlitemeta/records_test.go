package sqlitemeta

import (
	"context"
	"database/sql"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/forkspace/forkspace/meta/metatest"
)

// TestMigrateStagingRecords upgrades a database of migration 0014 (a row
// per key in staging, staging_log and checkpoint_staging) to 0015's
// records (metatest.CheckStagingRecords), and the old tables and the
// version counter are gone.
func TestMigrateStagingRecords(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	db := sql.OpenDB(connector{dsn: dsn(path, 0, false)})
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.DiscardHandler)
	if err := migrate(ctx, conn, ms[:14], log); err != nil {
		t.Fatal(err)
	}
	for _, q := range metatest.StagingRowsBefore() {
		if _, err := conn.ExecContext(ctx, q[0].(string), q[1:]...); err != nil {
			t.Fatalf("%s: %v", q[0], err)
		}
	}
	if err := migrate(ctx, conn, ms, log); err != nil {
		t.Fatal(err)
	}
	var left int
	err = conn.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM sqlite_master WHERE name IN ('staging', 'staging_log', 'checkpoint_staging'))
		+ (SELECT COUNT(*) FROM counters WHERE name = 'staging_log')`).Scan(&left)
	if err != nil || left != 0 {
		t.Errorf("old tables and counter after 0015: %d, %v", left, err)
	}
	conn.Close()
	db.Close()

	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	metatest.CheckStagingRecords(t, s)
}
