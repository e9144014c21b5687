package sqlitemeta

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"
	"path/filepath"
	"testing"
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

	v1 := migration{1, "0001_a.sql", "CREATE TABLE a (x INTEGER); INSERT INTO a VALUES (1);"}
	v2 := migration{2, "0002_b.sql", "CREATE TABLE b (y INTEGER); INSERT INTO a VALUES (2);"}
	bad := migration{3, "0003_bad.sql", "CREATE TABLE c (z INTEGER); INSERT INTO nowhere VALUES (1);"}
	count := func(q string) (n int) {
		t.Helper()
		if err := conn.QueryRowContext(ctx, q).Scan(&n); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		return n
	}

	steps := []struct {
		name     string
		ms       []migration
		wantErr  error // nil: success
		version  int
		rowsOfA  int
		tablesOf int // user tables a, b, c
	}{
		{"first", []migration{v1}, nil, 1, 1, 1},
		{"again", []migration{v1}, nil, 1, 1, 1},
		{"next", []migration{v1, v2}, nil, 2, 2, 2},
		{"failing step rolls back alone", []migration{v1, v2, bad}, errAny, 2, 2, 2},
		{"older code", []migration{v1}, errors.ErrUnsupported, 2, 2, 2},
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
		if m.version != i+1 || m.sql == "" {
			t.Errorf("migration %d: %+v", i, m)
		}
	}
}
