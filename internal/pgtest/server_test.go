package pgtest_test

import (
	"context"
	"testing"

	"github.com/forkspace/forkspace/internal/pgtest"
	"github.com/jackc/pgx/v5"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestDB checks that each test gets an empty database of its own on the
// shared server.
func TestDB(t *testing.T) {
	ctx := context.Background()
	a, b := pgtest.DB(t), pgtest.DB(t)
	if a == b {
		t.Fatalf("two databases share the URL %s", a)
	}
	conn, err := pgx.Connect(ctx, a)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE TABLE x (v int)"); err != nil {
		t.Fatal(err)
	}
	connB, err := pgx.Connect(ctx, b)
	if err != nil {
		t.Fatal(err)
	}
	defer connB.Close(ctx)
	var n int
	if err := connB.QueryRow(ctx, "SELECT count(*) FROM pg_tables WHERE tablename = 'x'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("table of one database seen in another: %d, %v", n, err)
	}
}

// TestRestart: a private server keeps what it acknowledged across a crash
// and restart, at the same URL.
func TestRestart(t *testing.T) {
	ctx := context.Background()
	srv := pgtest.Own(t)
	url := srv.DB(t)
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := conn.Exec(ctx, "CREATE TABLE x (v int); INSERT INTO x VALUES (7)"); err != nil {
		t.Fatal(err)
	}
	srv.Restart(t)
	if _, err := conn.Exec(ctx, "SELECT 1"); err == nil {
		t.Error("a connection from before the restart still works")
	}
	conn.Close(ctx)
	conn, err = pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var v int
	if err := conn.QueryRow(ctx, "SELECT v FROM x").Scan(&v); err != nil || v != 7 {
		t.Fatalf("after the restart: %d, %v", v, err)
	}
}
