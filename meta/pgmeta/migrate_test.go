package pgmeta_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/forkspace/forkspace/internal/pgtest"
	"github.com/forkspace/forkspace/meta/metatest"
	"github.com/jackc/pgx/v5"
)

// TestMigrateStagingRecords upgrades a database of migration 0004 (a row
// per key in staging, staging_log and checkpoint_staging) to 0005's
// records (metatest.CheckStagingRecords), and the old tables and the
// version counter are gone.
func TestMigrateStagingRecords(t *testing.T) {
	ctx := context.Background()
	url := pgtest.DB(t)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	stmts := [][]any{{`CREATE TABLE schema_migrations (version BIGINT PRIMARY KEY, applied_at BIGINT NOT NULL)`}}
	for v, name := range []string{"0001_init.sql", "0002_state_order.sql", "0003_head_gen.sql", "0004_packs.sql"} {
		sql, err := os.ReadFile(filepath.Join("migrations", name))
		if err != nil {
			t.Fatal(err)
		}
		stmts = append(stmts, []any{string(sql)}, []any{`INSERT INTO schema_migrations (version, applied_at) VALUES ($1, 0)`, v + 1})
	}
	for _, q := range append(stmts, metatest.StagingRowsBefore()...) {
		if _, err := conn.Exec(ctx, q[0].(string), q[1:]...); err != nil {
			t.Fatalf("%.80s: %v", q[0], err)
		}
	}
	s := openAt(t, url)
	metatest.CheckStagingRecords(t, s)
	var left int
	err = conn.QueryRow(ctx, `SELECT (SELECT COUNT(*) FROM pg_tables WHERE tablename IN ('staging', 'staging_log', 'checkpoint_staging'))
		+ (SELECT COUNT(*) FROM counters WHERE name = 'staging_log')`).Scan(&left)
	if err != nil || left != 0 {
		t.Errorf("old tables and counter after 0005: %d, %v", left, err)
	}
}
