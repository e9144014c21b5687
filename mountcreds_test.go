package forkspace

import (
	"bytes"
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/forkspace/forkspace/meta"
	_ "modernc.org/sqlite" // the "sqlite" driver, to make the store old again
)

// TestScrubMountCredentials opens a store written before migration 0011
// that holds an S3 endpoint's credentials where old builds put them: the
// mount table and the index record on the mount root, staged, folded into
// the tree of the head, of a checkpoint and of a fork, and in the audited
// states. After reopening, the secret is in no file of the store, every
// state reads the record without it, and fsck finds the store whole.
func TestScrubMountCredentials(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "store")
	const secret = "S3CR3T-kept-by-old-builds"
	dirty := "s3://b/p?endpoint=http%3A%2F%2FAKID%3A" + secret + "%40127.0.0.1%3A9000&region=us-east-1"
	record := []byte(`{"kind":"s3","source":"` + dirty + `","owner":"x","entries":0,"bytes":0,"strategy":"lazy"}`)
	const attr = "trusted.forkspace.mount"

	st, err := Open(ctx, Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	w, err := st.Create(ctx, "a", CreateOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.FS.Mkdir(ctx, "data", 0o755); err != nil {
		t.Fatal(err)
	}
	if err := w.FS.WriteFile(ctx, "data/f", []byte("kept"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := w.FS.Setxattr(ctx, "data", attr, record); err != nil {
		t.Fatal(err)
	}
	err = st.meta.Update(ctx, func(tx meta.Tx) error {
		return tx.SetSetting(mountKey(w.ID()), `[{"root":"/data","source":"`+dirty+`","options":{"mode":"read-write"}}]`)
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Checkpoint(ctx, "cp"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Fork(ctx, "b", ForkOptions{}); err != nil {
		t.Fatal(err)
	}
	if err := w.FS.WriteFile(ctx, "data/g", []byte("staged"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if !storeHolds(t, dir, secret) {
		t.Fatal("the old store does not hold the secret: the test plants nothing")
	}
	db, err := sql.Open("sqlite", "file:"+filepath.Join(dir, "meta.db")+"?_pragma=busy_timeout(10000)")
	if err != nil {
		t.Fatal(err)
	}
	// Rewind the schema to version 10: undo the later migrations' schema
	// changes, so each applies again (a migration after 0013 that changes
	// the schema adds its undoing here).
	for _, q := range []string{
		`DROP INDEX audit_states_by_ord`,
		`DROP INDEX audit_states_by_age`,
		`ALTER TABLE audit_states DROP COLUMN ord`,
		`ALTER TABLE workspaces DROP COLUMN head_gen`,
		`DELETE FROM schema_migrations WHERE version >= 11`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	db.Close()

	st, err = Open(ctx, Options{Dir: dir})
	if err != nil {
		t.Fatal(err)
	}
	for _, state := range []string{"a", "a@cp", "b"} {
		fsys, err := st.Snapshot(ctx, state)
		if err != nil {
			t.Fatal(err)
		}
		got, err := fsys.Getxattr(ctx, "data", attr)
		if err != nil {
			t.Fatalf("%s: %v", state, err)
		}
		if bytes.Contains(got, []byte(secret)) || !bytes.Contains(got, []byte(`"kind":"s3"`)) || !bytes.Contains(got, []byte("127.0.0.1")) {
			t.Errorf("%s: record %s", state, got)
		}
		if b, err := fsys.ReadFile(ctx, "data/f"); err != nil || string(b) != "kept" {
			t.Errorf("%s: data/f = %q, %v", state, b, err)
		}
	}
	report, err := st.Check(ctx)
	if err != nil || !report.Clean() {
		t.Fatalf("fsck after the migration: %+v, %v", report, err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	if storeHolds(t, dir, secret) {
		t.Fatal("the store still holds the secret after migration 0011")
	}
}

// storeHolds reports whether a file under dir contains s.
func storeHolds(t *testing.T, dir, s string) bool {
	t.Helper()
	found := false
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err == nil && bytes.Contains(b, []byte(s)) {
			t.Logf("%s holds %s", strings.TrimPrefix(p, dir), s)
			found = true
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return found
}
