package metatest

import (
	"testing"

	"github.com/forkspace/forkspace/meta"
)

// StagingRowsBefore returns statements ($1… placeholders) that fill a
// database at the schema before staging records (sqlite 0014, pgmeta 0004)
// with row-per-key staging tables: workspace ws-a with history below its
// base, a delta over two log versions and a staged row the log lacks (a
// store that broke the old invariant), ws-b, checkpoint cp-a and three
// recorded states. CheckStagingRecords checks the same contents after
// the migration.
func StagingRowsBefore() [][]any {
	b := func(s string) []byte { return []byte(s) }
	return [][]any{
		{`INSERT INTO workspaces (id, name, created_at, updated_at, staging_base) VALUES ('ws-a', 'a', 1, 1, 5), ('ws-b', 'b', 1, 1, 0)`},
		{`INSERT INTO checkpoints (id, workspace_id, created_at) VALUES ('cp-a', 'ws-a', 2)`},
		{`INSERT INTO staging_log (workspace_id, ver, key, value, deleted) VALUES
			('ws-a', 3, $1, $2, FALSE), ('ws-a', 6, $1, $3, FALSE), ('ws-a', 6, $4, $5, FALSE),
			('ws-a', 7, $4, NULL, TRUE), ('ws-a', 7, $6, $7, FALSE), ('ws-b', 1, $8, $9, FALSE)`,
			b("k1"), b("old"), b("v1"), b("k2"), b("v2"), b("k3"), b("v3"), b("kb"), b("x")},
		{`INSERT INTO staging (workspace_id, key, value, deleted, seq) VALUES
			('ws-a', $1, $2, FALSE, 10), ('ws-a', $3, NULL, TRUE, 11), ('ws-a', $4, $5, FALSE, 12),
			('ws-a', $6, $7, FALSE, 13), ('ws-b', $8, $9, FALSE, 1)`,
			b("k1"), b("v1"), b("k2"), b("k3"), b("v3"), b("k4"), b("v4"), b("kb"), b("x")},
		{`INSERT INTO checkpoint_staging (checkpoint_id, key, value, deleted, seq) VALUES
			('cp-a', $1, NULL, TRUE, 2), ('cp-a', $2, $3, FALSE, 1)`, b("k5"), b("k1"), b("c1")},
		{`INSERT INTO audit_log (seq, at, workspace_id, actor, tool) VALUES (1, 1, 'ws-a', 'a', 't'), (2, 2, 'ws-a', 'a', 't'), (3, 3, 'ws-a', 'a', 't')`},
		{`INSERT INTO audit_states (seq, workspace_id, at, base, ver, ord) VALUES
			(1, 'ws-a', 1, 0, 3, 1), (2, 'ws-a', 2, 5, 6, 2), (3, 'ws-a', 3, 5, 7, 3)`},
	}
}

// CheckStagingRecords checks a store migrated from StagingRowsBefore:
// every workspace's delta, the checkpoint's and every recorded state's
// rows read as before, and the workspace commits on top of its delta.
func CheckStagingRecords(t *testing.T, s meta.Store) {
	t.Helper()
	row := func(k, v string, deleted bool, seq int64) meta.Staged {
		r := meta.Staged{Key: []byte(k), Deleted: deleted, Seq: seq}
		if v != "" {
			r.Value = []byte(v)
		}
		return r
	}
	checkStaged(t, s, "ws-a", []meta.Staged{row("k1", "v1", false, 10), row("k2", "", true, 11), row("k3", "v3", false, 12), row("k4", "v4", false, 13)})
	checkStaged(t, s, "ws-b", []meta.Staged{row("kb", "x", false, 1)})
	checkCheckpointStaged(t, s, "cp-a", []meta.Staged{row("k1", "c1", false, 1), row("k5", "", true, 2)})
	for seq, want := range map[int64][]meta.Staged{
		1: {row("k1", "old", false, 3)},
		2: {row("k1", "v1", false, 6), row("k2", "v2", false, 6)},
		3: {row("k1", "v1", false, 6), row("k2", "", true, 7), row("k3", "v3", false, 7)},
	} {
		view(t, s, func(tx meta.Tx) error {
			got, err := tx.(meta.HistoryTx).StateStaged(seq)
			if d := diffStaged(got, want); d != "" {
				t.Errorf("state %d after the migration: %s", seq, d)
			}
			return err
		})
	}
	update(t, s, func(tx meta.Tx) error { return tx.PutStaged("ws-a", []meta.Staged{row("k3", "v3'", false, 14)}) })
	checkStaged(t, s, "ws-a", []meta.Staged{row("k1", "v1", false, 10), row("k2", "", true, 11), row("k3", "v3'", false, 14), row("k4", "v4", false, 13)})
}
