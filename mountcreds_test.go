package forkspace

import (
	"bytes"
	"context"
	"database/sql"
	"maps"
	"os"
	"path/filepath"
	"slices"
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
	// changes, so each applies again (a migration after 0015 that changes
	// the schema adds its undoing here).
	unreferStaging(t, db)
	unconvertStaging(t, db)
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

// unreferStaging undoes migration 0017 (docs/decisions/028): every record
// referring to other records gets the rows it reads there (following
// references, newest row per key), and the reference columns and the
// indexes go.
func unreferStaging(t *testing.T, db *sql.DB) {
	t.Helper()
	type record struct {
		owner     string
		ver       int64
		body      []byte
		ref       sql.NullString
		base, top sql.NullInt64
	}
	read := func(q string, args ...any) []record {
		t.Helper()
		rows, err := db.Query(q, args...)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []record
		for rows.Next() {
			var r record
			if err := rows.Scan(&r.owner, &r.ver, &r.body, &r.ref, &r.base, &r.top); err != nil {
				t.Fatal(err)
			}
			out = append(out, r)
		}
		return out
	}
	const columns = `SELECT workspace_id, ver, body, ref_ws, ref_base, ref_ver FROM staging_records`
	var rowsOf func(ws string, base, top int64) []meta.Staged
	rowsOf = func(ws string, base, top int64) []meta.Staged {
		newest := map[string]meta.Staged{}
		for _, rec := range read(columns+` WHERE workspace_id = $1 AND ver > $2 AND ver <= $3 ORDER BY ver`, ws, base, top) {
			var rows []meta.Staged
			if rec.ref.Valid {
				rows = rowsOf(rec.ref.String, rec.base.Int64, rec.top.Int64)
			} else if err := meta.ParseDelta(rec.body, func(r meta.Staged) error { rows = append(rows, r); return nil }); err != nil {
				t.Fatal(err)
			}
			for _, r := range rows {
				newest[string(r.Key)] = r
			}
		}
		out := slices.Collect(maps.Values(newest))
		slices.SortFunc(out, func(a, b meta.Staged) int { return bytes.Compare(a.Key, b.Key) })
		return out
	}
	for _, rec := range read(columns + ` WHERE ref_ws IS NOT NULL`) {
		body := meta.AppendDelta(nil, rowsOf(rec.ref.String, rec.base.Int64, rec.top.Int64))
		if _, err := db.Exec(`UPDATE staging_records SET body = $3, ref_ws = NULL WHERE workspace_id = $1 AND ver = $2`, rec.owner, rec.ver, body); err != nil {
			t.Fatal(err)
		}
	}
	for _, q := range []string{
		`DROP INDEX staging_records_by_ref`,
		`DROP INDEX checkpoint_deltas_by_workspace`,
		`ALTER TABLE staging_records DROP COLUMN ref_ws`,
		`ALTER TABLE staging_records DROP COLUMN ref_base`,
		`ALTER TABLE staging_records DROP COLUMN ref_ver`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
}

// unconvertStaging undoes migration 0015: the records of staging_records
// and checkpoint_deltas become the row-per-key tables again.
func unconvertStaging(t *testing.T, db *sql.DB) {
	t.Helper()
	exec := func(q string, args ...any) {
		t.Helper()
		if _, err := db.Exec(q, args...); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	exec(`CREATE TABLE staging (workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
		key BLOB NOT NULL, value BLOB, deleted BOOLEAN NOT NULL DEFAULT FALSE, seq BIGINT NOT NULL,
		PRIMARY KEY (workspace_id, key)) WITHOUT ROWID`)
	exec(`CREATE TABLE staging_log (workspace_id TEXT NOT NULL REFERENCES workspaces (id) ON DELETE CASCADE,
		ver BIGINT NOT NULL, key BLOB NOT NULL, value BLOB, deleted BOOLEAN NOT NULL DEFAULT FALSE,
		PRIMARY KEY (workspace_id, ver, key)) WITHOUT ROWID`)
	exec(`CREATE TABLE checkpoint_staging (checkpoint_id TEXT NOT NULL REFERENCES checkpoints (id) ON DELETE CASCADE,
		key BLOB NOT NULL, value BLOB, deleted BOOLEAN NOT NULL DEFAULT FALSE, seq BIGINT NOT NULL,
		PRIMARY KEY (checkpoint_id, key)) WITHOUT ROWID`)
	type owned struct {
		owner string
		ver   int64
		body  []byte
	}
	read := func(q string) []owned {
		t.Helper()
		rows, err := db.Query(q)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		var out []owned
		for rows.Next() {
			var o owned
			if err := rows.Scan(&o.owner, &o.ver, &o.body); err != nil {
				t.Fatal(err)
			}
			out = append(out, o)
		}
		return out
	}
	each := func(body []byte, fn func(meta.Staged)) {
		t.Helper()
		if err := meta.ParseDelta(body, func(r meta.Staged) error { fn(r); return nil }); err != nil {
			t.Fatal(err)
		}
	}
	var top int64
	for _, rec := range read(`SELECT r.workspace_id, r.ver, r.body FROM staging_records AS r ORDER BY r.workspace_id, r.ver`) {
		top = max(top, rec.ver)
		each(rec.body, func(r meta.Staged) {
			exec(`INSERT INTO staging_log (workspace_id, ver, key, value, deleted) VALUES ($1, $2, $3, $4, $5)`, rec.owner, rec.ver, r.Key, r.Value, r.Deleted)
		})
	}
	for _, rec := range read(`SELECT r.workspace_id, r.ver, r.body FROM staging_records AS r JOIN workspaces AS w ON w.id = r.workspace_id
		WHERE r.ver > w.staging_base ORDER BY r.workspace_id, r.ver`) {
		each(rec.body, func(r meta.Staged) {
			exec(`INSERT INTO staging (workspace_id, key, value, deleted, seq) VALUES ($1, $2, $3, $4, $5)
				ON CONFLICT (workspace_id, key) DO UPDATE SET value = excluded.value, deleted = excluded.deleted, seq = excluded.seq`,
				rec.owner, r.Key, r.Value, r.Deleted, r.Seq)
		})
	}
	// A checkpoint's delta is its body, or the newest row per key of its
	// workspace's records in (base, ver].
	put := func(id string, r meta.Staged) {
		exec(`INSERT INTO checkpoint_staging (checkpoint_id, key, value, deleted, seq) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (checkpoint_id, key) DO UPDATE SET value = excluded.value, deleted = excluded.deleted, seq = excluded.seq`,
			id, r.Key, r.Value, r.Deleted, r.Seq)
	}
	for _, rec := range read(`SELECT checkpoint_id, 0, body FROM checkpoint_deltas WHERE body IS NOT NULL`) {
		each(rec.body, func(r meta.Staged) { put(rec.owner, r) })
	}
	for _, rec := range read(`SELECT d.checkpoint_id, r.ver, r.body FROM checkpoint_deltas AS d JOIN staging_records AS r
		ON r.workspace_id = d.workspace_id AND r.ver > d.base AND r.ver <= d.ver ORDER BY d.checkpoint_id, r.ver`) {
		each(rec.body, func(r meta.Staged) { put(rec.owner, r) })
	}
	exec(`INSERT INTO counters (name, next) VALUES ('staging_log', $1)`, top+1)
	exec(`DROP TABLE staging_records`)
	exec(`DROP TABLE checkpoint_deltas`)
}
