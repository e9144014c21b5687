package sqlitemeta

import (
	"context"
	"database/sql"
	"fmt"
	"testing"
	"time"

	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/meta/metatest"
)

// TestMigrateStagingRecords upgrades a database of migration 0014 (a row
// per key in staging, staging_log and checkpoint_staging) to 0015's
// records (metatest.CheckStagingRecords), and the old tables and the
// version counter are gone.
func TestMigrateStagingRecords(t *testing.T) {
	ctx := context.Background()
	path, _, conn, ms, log := migratedDB(t, 14)
	for _, q := range metatest.StagingRowsBefore() {
		if _, err := conn.ExecContext(ctx, q[0].(string), q[1:]...); err != nil {
			t.Fatalf("%s: %v", q[0], err)
		}
	}
	if err := migrate(ctx, conn, ms, log); err != nil {
		t.Fatal(err)
	}
	var left int
	err := conn.QueryRowContext(ctx, `SELECT (SELECT COUNT(*) FROM sqlite_master WHERE name IN ('staging', 'staging_log', 'checkpoint_staging'))
		+ (SELECT COUNT(*) FROM counters WHERE name = 'staging_log')`).Scan(&left)
	if err != nil || left != 0 {
		t.Errorf("old tables and counter after 0015: %d, %v", left, err)
	}
	metatest.CheckStagingRecords(t, openMigrated(t, path, conn))
}

// TestForkRefersToRecords upgrades a database of migration 0016 holding a
// workspace of 50 records, then copies its delta (a fork): the copy is one
// reference record, not the rows (0017, docs/decisions/028); the source's
// fold and pruning keep the records it refers to, and deleting the
// source writes the rows into the reference and drops the source's
// records.
func TestForkRefersToRecords(t *testing.T) {
	ctx := context.Background()
	path, db, conn, ms, log := migratedDB(t, 16)
	const n = 50
	var want []meta.Staged
	if _, err := conn.ExecContext(ctx, `INSERT INTO workspaces (id, name, created_at, updated_at) VALUES ('ws-a', 'a', 1, 1), ('ws-b', 'b', 1, 1)`); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		r := meta.Staged{Key: []byte(fmt.Sprintf("k%03d", i)), Value: []byte("v"), Seq: int64(i + 1)}
		want = append(want, r)
		if _, err := conn.ExecContext(ctx, `INSERT INTO staging_records (workspace_id, ver, body) VALUES ('ws-a', $1, $2)`,
			i+1, meta.AppendDelta(nil, []meta.Staged{r})); err != nil {
			t.Fatal(err)
		}
	}
	if err := migrate(ctx, conn, ms, log); err != nil {
		t.Fatal(err)
	}
	s := openMigrated(t, path, conn)
	update := func(fn func(meta.Tx) error) {
		t.Helper()
		if err := s.Update(ctx, fn); err != nil {
			t.Fatal(err)
		}
	}
	check := func(ws string) {
		t.Helper()
		err := s.View(ctx, func(tx meta.Tx) error {
			got, err := tx.Staged(ws)
			if len(got) != len(want) {
				t.Errorf("%s: %d rows, want %d", ws, len(got), len(want))
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	type stored struct {
		records, bodyBytes int
		ref                sql.NullString
	}
	recordsOf := func(ws string) (st stored) {
		t.Helper()
		err := db.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(length(body)), 0), MAX(ref_ws) FROM staging_records WHERE workspace_id = $1`, ws).
			Scan(&st.records, &st.bodyBytes, &st.ref)
		if err != nil {
			t.Fatal(err)
		}
		return st
	}

	update(func(tx meta.Tx) error { return tx.CopyStaged("ws-a", "ws-b") })
	check("ws-b")
	if st := recordsOf("ws-b"); st.records != 1 || st.bodyBytes != 1 || st.ref.String != "ws-a" {
		t.Errorf("the copy's records: %+v, want one reference to ws-a (an empty delta)", st)
	}
	update(func(tx meta.Tx) error {
		if err := tx.DeleteStaged("ws-a", n); err != nil {
			return err
		}
		_, err := tx.(meta.HistoryTx).PruneStates("ws-a", 0, time.Time{})
		return err
	})
	if st := recordsOf("ws-a"); st.records != n {
		t.Errorf("the source's records after its fold: %d, want the %d the copy refers to", st.records, n)
	}
	check("ws-b")
	update(func(tx meta.Tx) error { return tx.DeleteWorkspace("ws-a") })
	check("ws-b")
	if st := recordsOf("ws-a"); st.records != 0 {
		t.Errorf("the deleted source's records: %d, want 0", st.records)
	}
	if st := recordsOf("ws-b"); st.records != 1 || st.bodyBytes <= 1 || st.ref.Valid {
		t.Errorf("the copy's records after the source's deletion: %+v, want one holding the rows", st)
	}
}
