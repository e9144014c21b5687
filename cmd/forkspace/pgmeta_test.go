package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forkspace/forkspace/httpapi"
	"github.com/forkspace/forkspace/internal/pgtest"
	"github.com/jackc/pgx/v5"
)

// TestPostgresMeta runs commands against --meta postgres:// (through
// $FORKSPACE_META) with the store directory's blobs: the rows go to
// PostgreSQL (no meta.db in the store directory), bytes to blobs/, and
// create, put, cat, fork, checkpoint, diff and gc work as on SQLite.
func TestPostgresMeta(t *testing.T) {
	url := pgtest.DB(t)
	t.Setenv("FORKSPACE_META", url)
	c := newCLI(t)
	big := strings.Repeat("forkspace on postgres\n", 4000) // past the inline limit: a blob
	c.ok(nil, "workspace", "create", "a")
	c.ok([]byte(big), "-w", "a", "put", "-", "/big.txt")
	c.ok([]byte("small\n"), "-w", "a", "put", "-", "/small.txt")
	if got := c.ok(nil, "-w", "a", "cat", "/big.txt"); got != big {
		t.Fatalf("cat /big.txt returned %d bytes, want %d", len(got), len(big))
	}
	c.ok(nil, "-w", "a", "checkpoint", "v1")
	c.ok(nil, "workspace", "fork", "a", "b")
	c.ok([]byte("changed\n"), "-w", "b", "put", "-", "/small.txt")
	c.ok(nil, "-w", "b", "rm", "/big.txt")
	if got := c.ok(nil, "-w", "a", "cat", "/small.txt"); got != "small\n" {
		t.Fatalf("cat /small.txt in a after b's put = %q", got)
	}
	diff := c.ok(nil, "diff", "a@v1", "b")
	for _, want := range []string{"small.txt", "big.txt"} {
		if !strings.Contains(diff, want) {
			t.Errorf("diff a@v1 b does not name %s:\n%s", want, diff)
		}
	}
	var res httpapi.GCResult
	c.json(&res, "gc", "--dry-run")
	if !res.DryRun || res.Reachable.Blobs == 0 {
		t.Errorf("gc --dry-run = %+v, want a dry run that reaches a's blobs", res)
	}
	if _, err := os.Stat(filepath.Join(c.store, "meta.db")); err == nil {
		t.Error("the store directory has a meta.db: metadata went to SQLite")
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, `SELECT COUNT(*) FROM workspaces`).Scan(&n); err != nil || n != 2 {
		t.Errorf("workspaces in PostgreSQL: %d, %v; want 2", n, err)
	}
}

// TestPostgresMetaPassword refuses a --meta URL holding a password with a
// usage error saying to use the environment, without echoing it.
func TestPostgresMetaPassword(t *testing.T) {
	c := newCLI(t)
	const secret = "pg-S3CR3T"
	for _, raw := range []string{
		"postgres://forkspace:" + secret + "@127.0.0.1:9/db",
		"postgres:///db?host=/tmp&password=" + secret,
	} {
		errs := c.fails(exitUsage, nil, "--meta", raw, "workspace", "ls")
		if !strings.Contains(errs, "PGPASSWORD") || strings.Contains(errs, secret) {
			t.Errorf("--meta %s: %q, want a message naming PGPASSWORD without the secret", raw, errs)
		}
	}
	c.fails(exitUsage, nil, "--meta", "mysql://db/x", "workspace", "ls")
}
