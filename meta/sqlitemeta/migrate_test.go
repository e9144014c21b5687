package sqlitemeta

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"maps"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/meta/internal/sqltx"
)

// TestMigrate applies made-up migrations step by step: each is applied
// once, in order, atomically, and a database ahead of the code is refused.
func TestMigrate(t *testing.T) {
	ctx := context.Background()
	log := slog.New(slog.DiscardHandler)
	db := sql.OpenDB(connector{dsn: dsn(filepath.Join(t.TempDir(), "m.db"), 0, false)})
	defer db.Close()
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	v1 := sqltx.Migration{Version: 1, Name: "0001_a.sql", SQL: "CREATE TABLE a (x INTEGER); INSERT INTO a VALUES (1);"}
	v2 := sqltx.Migration{Version: 2, Name: "0002_b.sql", SQL: "CREATE TABLE b (y INTEGER); INSERT INTO a VALUES (2);"}
	bad := sqltx.Migration{Version: 3, Name: "0003_bad.sql", SQL: "CREATE TABLE c (z INTEGER); INSERT INTO nowhere VALUES (1);"}
	count := func(q string) (n int) {
		t.Helper()
		if err := conn.QueryRowContext(ctx, q).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}

	steps := []struct {
		name     string
		ms       []sqltx.Migration
		wantErr  error // nil: success
		version  int
		rowsOfA  int
		tablesOf int // user tables a, b, c
	}{
		{"first", []sqltx.Migration{v1}, nil, 1, 1, 1},
		{"again", []sqltx.Migration{v1}, nil, 1, 1, 1},
		{"next", []sqltx.Migration{v1, v2}, nil, 2, 2, 2},
		{"failing step rolls back alone", []sqltx.Migration{v1, v2, bad}, errAny, 2, 2, 2},
		{"older code", []sqltx.Migration{v1}, errors.ErrUnsupported, 2, 2, 2},
	}
	for _, st := range steps {
		err := migrate(ctx, conn, st.ms, log)
		switch {
		case st.wantErr == nil && err != nil:
			t.Fatalf("%s: %v", st.name, err)
		case st.wantErr == errAny && err == nil:
			t.Fatalf("%s: succeeded", st.name)
		case st.wantErr != nil && st.wantErr != errAny && !errors.Is(err, st.wantErr):
			t.Fatalf("%s: %v, want %v", st.name, err, st.wantErr)
		}
		if v := count(`SELECT MAX(version) FROM schema_migrations`); v != st.version {
			t.Errorf("%s: version %d, want %d", st.name, v, st.version)
		}
		if n := count(`SELECT COUNT(*) FROM a`); n != st.rowsOfA {
			t.Errorf("%s: %d rows in a, want %d", st.name, n, st.rowsOfA)
		}
		if n := count(`SELECT COUNT(*) FROM sqlite_master WHERE type = 'table' AND name IN ('a', 'b', 'c')`); n != st.tablesOf {
			t.Errorf("%s: %d tables, want %d", st.name, n, st.tablesOf)
		}
	}
}

// errAny marks a step that must fail with any error.
var errAny = errors.New("any error")

// TestEmbeddedMigrations checks the shipped migrations are numbered 1…n.
func TestEmbeddedMigrations(t *testing.T) {
	ms, err := migrations()
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range ms {
		if m.Version != i+1 || m.SQL == "" {
			t.Errorf("migration %d: %+v", i, m)
		}
	}
}

// TestMigrateTenants upgrades a database of migration 0007 holding a
// workspace with a checkpoint, its delta, staging and a conflict: 0008
// rebuilds the workspaces table, and every row stays, in the tenant
// "default", with deletes still cascading.
// migratedTo returns a connection to a new database migrated to version
// v, the embedded migrations and a discarding logger, for tests of a later
// migration on data written at v.
func migratedTo(t *testing.T, v int) (*sql.Conn, []sqltx.Migration, *slog.Logger) {
	t.Helper()
	_, _, conn, ms, log := migratedDB(t, v)
	return conn, ms, log
}

// migratedDB is migratedTo for a test that queries the database through
// its pool or opens it again (Open): it returns the file's path and the
// pool too (closed when the test ends; closing it first is allowed).
func migratedDB(t *testing.T, v int) (path string, db *sql.DB, conn *sql.Conn, ms []sqltx.Migration, log *slog.Logger) {
	t.Helper()
	log = slog.New(slog.DiscardHandler)
	path = filepath.Join(t.TempDir(), "m.db")
	db = sql.OpenDB(connector{dsn: dsn(path, 0, false)})
	t.Cleanup(func() { db.Close() })
	db.SetMaxOpenConns(1)
	conn, err := db.Conn(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	if ms, err = migrations(); err != nil {
		t.Fatal(err)
	}
	if err := migrate(context.Background(), conn, ms[:v], log); err != nil {
		t.Fatal(err)
	}
	return path, db, conn, ms, log
}

// openMigrated closes a migratedDB's connection and opens the database at
// path as a Store, closed when the test ends.
func openMigrated(t *testing.T, path string, conn *sql.Conn) *Store {
	t.Helper()
	conn.Close()
	s, err := Open(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func TestMigrateTenants(t *testing.T) {
	ctx := context.Background()
	conn, ms, log := migratedTo(t, 7)
	for _, q := range []string{
		`INSERT INTO workspaces (id, name, created_at, updated_at) VALUES ('ws-a', 'a', 1, 1), ('ws-b', 'b', 1, 1)`,
		`INSERT INTO checkpoints (id, workspace_id, created_at) VALUES ('cp-a', 'ws-a', 2)`,
		`INSERT INTO checkpoint_staging (checkpoint_id, key, seq) VALUES ('cp-a', x'01', 1)`,
		`INSERT INTO staging (workspace_id, key, seq) VALUES ('ws-a', x'01', 1)`,
		`INSERT INTO merge_conflicts (workspace_id, path, kind, created_at) VALUES ('ws-a', 'f', 'content', 3)`,
	} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	// Up to 0014, the last schema with the row-per-key staging tables
	// (TestMigrateStagingRecords takes them further).
	if err := migrate(ctx, conn, ms[:14], log); err != nil {
		t.Fatal(err)
	}
	count := func(q string) (n int) {
		t.Helper()
		if err := conn.QueryRowContext(ctx, q).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}
	for q, want := range map[string]int{
		`SELECT COUNT(*) FROM workspaces WHERE tenant = 'default'`: 2,
		`SELECT COUNT(*) FROM checkpoints`:                         1,
		`SELECT COUNT(*) FROM checkpoint_staging`:                  1,
		`SELECT COUNT(*) FROM staging`:                             1,
		`SELECT COUNT(*) FROM merge_conflicts`:                     1,
		`SELECT COUNT(*) FROM tenants WHERE name = 'default'`:      1,
		`PRAGMA foreign_keys`:                                      1,
	} {
		if n := count(q); n != want {
			t.Errorf("%s = %d, want %d", q, n, want)
		}
	}
	// Names are unique per tenant now; deletes still cascade.
	if _, err := conn.ExecContext(ctx, `INSERT INTO workspaces (id, tenant, name, created_at, updated_at) VALUES ('ws-c', 'acme', 'a', 1, 1)`); err != nil {
		t.Errorf("same name in another tenant: %v", err)
	}
	if _, err := conn.ExecContext(ctx, `INSERT INTO workspaces (id, tenant, name, created_at, updated_at) VALUES ('ws-d', 'default', 'a', 1, 1)`); err == nil {
		t.Errorf("a taken name in the same tenant was accepted")
	}
	if _, err := conn.ExecContext(ctx, `DELETE FROM workspaces WHERE id = 'ws-a'`); err != nil {
		t.Fatal(err)
	}
	for _, table := range []string{"checkpoints", "checkpoint_staging", "staging", "merge_conflicts"} {
		if n := count(`SELECT COUNT(*) FROM ` + table); n != 0 {
			t.Errorf("%d rows of %s left after deleting their workspace", n, table)
		}
	}
}

// TestMigrateStateOrder upgrades a database of migration 0011 holding the
// states of two workspaces, interleaved: 0012 numbers each workspace's
// states in seq order (the conformance suite's PruneCounts covers the
// numbering of states recorded after it).
func TestMigrateStateOrder(t *testing.T) {
	ctx := context.Background()
	conn, ms, log := migratedTo(t, 11)
	for _, q := range []string{
		`INSERT INTO workspaces (id, name, created_at, updated_at) VALUES ('ws-a', 'a', 1, 1), ('ws-b', 'b', 1, 1)`,
		`INSERT INTO audit_states (seq, workspace_id, at, base, ver) VALUES (1, 'ws-a', 1, 0, 0), (2, 'ws-b', 2, 0, 0), (5, 'ws-a', 3, 0, 0), (9, 'ws-a', 4, 0, 0), (11, 'ws-b', 5, 0, 0)`,
	} {
		if _, err := conn.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	if err := migrate(ctx, conn, ms, log); err != nil {
		t.Fatal(err)
	}
	rows, err := conn.QueryContext(ctx, `SELECT seq, ord FROM audit_states ORDER BY seq`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	got := map[int64]int64{}
	for rows.Next() {
		var seq, ord int64
		if err := rows.Scan(&seq, &ord); err != nil {
			t.Fatal(err)
		}
		got[seq] = ord
	}
	want := map[int64]int64{1: 1, 5: 2, 9: 3, 2: 1, 11: 2}
	if !maps.Equal(got, want) {
		t.Errorf("ords after migration = %v, want %v", got, want)
	}
}

// TestMigrateInlineRowid upgrades a database of migration 0017 holding
// inline bodies in 0016's WITHOUT ROWID table: 0018 keeps every body and
// its times in a rowid table with a unique hash index, which lookups use.
func TestMigrateInlineRowid(t *testing.T) {
	ctx := context.Background()
	conn, ms, log := migratedTo(t, 17)
	big := bytes.Repeat([]byte("an overflowing body "), 600)
	for i, data := range [][]byte{[]byte("small"), big} {
		_, err := conn.ExecContext(ctx, `INSERT INTO inline_bodies (hash, data, created_at, touched_at) VALUES (?, ?, ?, ?)`,
			[]byte{byte(i)}, data, 10+i, 20+i)
		if err != nil {
			t.Fatal(err)
		}
	}
	if err := migrate(ctx, conn, ms[:18], log); err != nil {
		t.Fatal(err)
	}
	for i, want := range [][]byte{[]byte("small"), big} {
		var data []byte
		var created, touched int
		err := conn.QueryRowContext(ctx, `SELECT data, created_at, touched_at FROM inline_bodies WHERE hash = ?`, []byte{byte(i)}).Scan(&data, &created, &touched)
		if err != nil || !bytes.Equal(data, want) || created != 10+i || touched != 20+i {
			t.Fatalf("body %d after migrating: %d bytes, %d, %d, %v", i, len(data), created, touched, err)
		}
	}
	var plan string
	err := conn.QueryRowContext(ctx, `EXPLAIN QUERY PLAN SELECT data FROM inline_bodies WHERE hash = ?`, []byte{0}).Scan(new(int), new(int), new(int), &plan)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(plan, "USING INDEX") {
		t.Errorf("a lookup by hash plans %q, want the hash index", plan)
	}
	if _, err := conn.ExecContext(ctx, `INSERT INTO inline_bodies (hash, data, created_at) VALUES (?, 'dup', 1)`, []byte{0}); err == nil {
		t.Error("a second row with the same hash was accepted")
	}
}

// TestMigrateInlineChecksums upgrades a 0018 database holding an inline
// body: the body reads as before, unchecked (no checksum: readers verify
// it against its hash), and a put of the same body writes its checksum.
func TestMigrateInlineChecksums(t *testing.T) {
	ctx := context.Background()
	path, _, conn, ms, log := migratedDB(t, 18)
	data := []byte("a body written before checksums")
	h := cas.Sum(data)
	if _, err := conn.ExecContext(ctx, `INSERT INTO inline_bodies (hash, data, created_at, touched_at) VALUES (?, ?, 1, 1)`, h[:], data); err != nil {
		t.Fatal(err)
	}
	if err := migrate(ctx, conn, ms, log); err != nil {
		t.Fatal(err)
	}
	s := openMigrated(t, path, conn)
	read := func() (got []byte, checked bool) {
		t.Helper()
		err := s.GetCheckedInlines(ctx, []cas.Hash{h}, func(_ cas.Hash, d []byte, ok bool) error {
			got, checked = d, ok
			return nil
		})
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("read the body: %q, %v", got, err)
		}
		return got, checked
	}
	if _, checked := read(); checked {
		t.Error("a body stored without a checksum was reported checked")
	}
	if err := s.Update(ctx, func(tx meta.Tx) error { return tx.PutInline([]meta.Object{{Hash: h, Data: data}}) }); err != nil {
		t.Fatal(err)
	}
	if _, checked := read(); !checked {
		t.Error("a second put of the body wrote no checksum")
	}
}
