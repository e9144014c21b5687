package sqlitemeta

import (
	"bytes"
	"context"
	"encoding/binary"
	"strings"
	"testing"
)

// TestMigrateScrubsMountCredentials: a store from before 0011 holding an
// S3 endpoint with user information in its mount table and in the mount
// root's index record (staging, staging log, checkpoint staging) holds it
// nowhere after migrating; everything else stays as it was.
func TestMigrateScrubsMountCredentials(t *testing.T) {
	ctx := context.Background()
	conn, ms, log := migratedTo(t, 10)
	const (
		secret = "S3CR3T-do-not-keep"
		dirty  = "s3://bucket/p?endpoint=http%3A%2F%2FAKID%3A" + secret + "%40127.0.0.1%3A9000&region=us-east-1"
		clean  = "s3://bucket/p?endpoint=http%3A%2F%2F127.0.0.1%3A9000&region=us-east-1"
		other  = "git+https://host/r.git#main"
	)
	table := `[{"root":"/data","source":"` + dirty + `","options":{"mode":"read-write"}},{"root":"/git","source":"` + other + `","options":{"mode":"read-only"}}]`
	state := []byte(`{"kind":"s3","source":"` + dirty + `","owner":"ws-a","entries":3,"bytes":12345678901234567}`)
	key := make([]byte, 10, 40)
	key[0] = 'i'
	binary.BigEndian.PutUint64(key[1:9], 7)
	key[9] = 'x'
	key = append(key, "trusted.forkspace.mount"...)
	otherKey := append(append([]byte(nil), key[:10]...), "user.note"...)
	for _, q := range []struct {
		sql  string
		args []any
	}{
		{`INSERT INTO workspaces (id, name, created_at, updated_at) VALUES ('ws-a', 'a', 1, 1)`, nil},
		{`INSERT INTO checkpoints (id, workspace_id, created_at) VALUES ('cp-a', 'ws-a', 2)`, nil},
		{`INSERT INTO settings (key, value) VALUES ('mount.table.ws-a', $1), ('note', $2)`, []any{table, dirty}},
		{`INSERT INTO staging (workspace_id, key, value, seq) VALUES ('ws-a', $1, $2, 1), ('ws-a', $3, $4, 2)`, []any{key, state, otherKey, []byte(dirty)}},
		{`INSERT INTO staging_log (workspace_id, ver, key, value) VALUES ('ws-a', 1, $1, $2)`, []any{key, state}},
		{`INSERT INTO checkpoint_staging (checkpoint_id, key, value, seq) VALUES ('cp-a', $1, $2, 1)`, []any{key, state}},
	} {
		if _, err := conn.ExecContext(ctx, q.sql, q.args...); err != nil {
			t.Fatalf("%s: %v", q.sql, err)
		}
	}
	if err := migrate(ctx, conn, ms[:11], log); err != nil {
		t.Fatal(err)
	}
	var got string
	if err := conn.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = 'mount.table.ws-a'`).Scan(&got); err != nil {
		t.Fatal(err)
	}
	got = strings.ReplaceAll(got, `\u0026`, "&") // json.Marshal's escape
	if strings.Contains(got, secret) || !strings.Contains(got, `"source":"`+clean+`"`) || !strings.Contains(got, other) || !strings.Contains(got, `"mode":"read-write"`) {
		t.Errorf("mount table after 0011: %s", got)
	}
	for _, table := range []string{"staging", "staging_log", "checkpoint_staging"} {
		var v []byte
		if err := conn.QueryRowContext(ctx, `SELECT value FROM `+table+` WHERE key = $1`, key).Scan(&v); err != nil {
			t.Fatal(err)
		}
		v = bytes.ReplaceAll(v, []byte(`\u0026`), []byte("&"))
		if bytes.Contains(v, []byte(secret)) || !bytes.Contains(v, []byte(`"source":"`+clean+`"`)) || !bytes.Contains(v, []byte(`"bytes":12345678901234567`)) {
			t.Errorf("index record in %s after 0011: %s", table, v)
		}
	}
	// Values that are not mount records are left alone, whatever they say.
	var v []byte
	if err := conn.QueryRowContext(ctx, `SELECT value FROM staging WHERE key = $1`, otherKey).Scan(&v); err != nil || string(v) != dirty {
		t.Errorf("another xattr changed: %q, %v", v, err)
	}
	if err := conn.QueryRowContext(ctx, `SELECT value FROM settings WHERE key = 'note'`).Scan(&got); err != nil || got != dirty {
		t.Errorf("another setting changed: %q, %v", got, err)
	}
}
