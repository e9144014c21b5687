package metatest

import (
	"testing"
	"time"

	"github.com/forkspace/forkspace/meta"
)

// testForkCopies checks CopyStaged as forks use it, where a driver may
// share the source's stored delta instead of copying it (decision 028):
// chains of copies, writes to either side afterwards, checkpoints and
// recorded states of a copy, folds and pruning of the source, StagedKey on
// copies that never committed, and deleting the source, then the middle of
// a chain. Every copy reads what the source held when it was copied.
func testForkCopies(t *testing.T, s meta.Store) {
	createWorkspaces(t, s, "a", "b", "c", "d")
	a, b, c, d := workspace("a").ID, workspace("b").ID, workspace("c").ID, workspace("d").ID
	row := func(k, v string, seq int64) meta.Staged {
		if v == "" {
			return meta.Staged{Key: []byte(k), Deleted: true, Seq: seq}
		}
		return meta.Staged{Key: []byte(k), Value: []byte(v), Seq: seq}
	}
	// a's delta spans two commits, each rewriting "u" as every commit
	// rewrites the usage record.
	update(t, s, func(tx meta.Tx) error {
		return tx.PutStaged(a, []meta.Staged{row("k1", "v1", 1), row("u", "1", 2)})
	})
	update(t, s, func(tx meta.Tx) error {
		return tx.PutStaged(a, []meta.Staged{row("k2", "v2", 3), row("u", "2", 4)})
	})
	ofA := []meta.Staged{row("k1", "v1", 1), row("k2", "v2", 3), row("u", "2", 4)}
	update(t, s, func(tx meta.Tx) error { return tx.CopyStaged(a, b) })
	checkStaged(t, s, b, ofA)

	// Writes to either side after the copy stay on their side.
	update(t, s, func(tx meta.Tx) error { return tx.PutStaged(a, []meta.Staged{row("k1", "a", 5), row("u", "3", 6)}) })
	update(t, s, func(tx meta.Tx) error { return tx.PutStaged(b, []meta.Staged{row("k2", "", 5), row("u", "b", 6)}) })
	checkStaged(t, s, a, []meta.Staged{row("k1", "a", 5), row("k2", "v2", 3), row("u", "3", 6)})
	ofB := []meta.Staged{row("k1", "v1", 1), row("k2", "", 5), row("u", "b", 6)}
	checkStaged(t, s, b, ofB)

	// A copy of a copy, and a copy of that before it commits anything.
	update(t, s, func(tx meta.Tx) error {
		if err := tx.CopyStaged(b, c); err != nil {
			return err
		}
		return tx.CopyStaged(c, d)
	})
	checkStaged(t, s, c, ofB)
	checkStaged(t, s, d, ofB)
	checkStagedKey(t, s, "u", map[string]meta.Staged{a: row("u", "3", 6), b: row("u", "b", 6), c: row("u", "b", 6), d: row("u", "b", 6)})
	checkStagedKey(t, s, "k1", map[string]meta.Staged{a: row("k1", "a", 5), b: row("k1", "v1", 1), c: row("k1", "v1", 1), d: row("k1", "v1", 1)})

	// A checkpoint and a recorded state of a copy that has not committed.
	update(t, s, func(tx meta.Tx) error {
		if err := tx.CreateCheckpoint(&meta.Checkpoint{ID: "cp-c", WorkspaceID: c}); err != nil {
			return err
		}
		return tx.SnapshotStaged(c, "cp-c")
	})
	var seq int64
	update(t, s, func(tx meta.Tx) error {
		h, ok := tx.(meta.HistoryTx)
		if !ok {
			return nil
		}
		e := meta.AuditEntry{WorkspaceID: c, Tool: "step", Time: time.Unix(1, 0)}
		if err := tx.AppendAudit(&e); err != nil {
			return err
		}
		seq = e.Seq
		return h.RecordState(e.Seq, c, e.Time)
	})
	checkState := func() {
		t.Helper()
		checkCheckpointStaged(t, s, "cp-c", ofB)
		if seq == 0 {
			return
		}
		view(t, s, func(tx meta.Tx) error {
			got, err := tx.(meta.HistoryTx).StateStaged(seq)
			if !sameRows(got, ofB) {
				t.Errorf("state of the copy: rows %v, want %v", got, ofB)
			}
			return err
		})
	}
	checkState()

	// Folding a and b and pruning their history leaves the copies as
	// they were.
	update(t, s, func(tx meta.Tx) error {
		for _, id := range []string{a, b} {
			if err := tx.DeleteStaged(id, 100); err != nil {
				return err
			}
			if h, ok := tx.(meta.HistoryTx); ok {
				if _, err := h.PruneStates(id, 0, time.Time{}); err != nil {
					return err
				}
			}
		}
		return nil
	})
	checkStaged(t, s, a, nil)
	checkStaged(t, s, b, nil)
	checkStaged(t, s, c, ofB)
	checkStaged(t, s, d, ofB)
	checkState()

	// Deleting the workspaces copied from leaves the copies as they were.
	update(t, s, func(tx meta.Tx) error { return tx.DeleteWorkspace(a) })
	checkStaged(t, s, c, ofB)
	update(t, s, func(tx meta.Tx) error { return tx.DeleteWorkspace(b) })
	checkStaged(t, s, c, ofB)
	checkStaged(t, s, d, ofB)
	checkState()
	checkStagedKey(t, s, "u", map[string]meta.Staged{c: row("u", "b", 6), d: row("u", "b", 6)})

	// A fold of one copy keeps what it did not apply, and the other copy.
	update(t, s, func(tx meta.Tx) error { return tx.DeleteStaged(c, 1) })
	checkStaged(t, s, c, ofB[1:])
	checkStaged(t, s, d, ofB)
	update(t, s, func(tx meta.Tx) error { return tx.DeleteWorkspace(c) })
	checkStaged(t, s, d, ofB)
}

// checkStagedKey checks what StagedKey reports for key: want maps each
// workspace holding key to its row.
func checkStagedKey(t testing.TB, s meta.Store, key string, want map[string]meta.Staged) {
	t.Helper()
	got := map[string]meta.Staged{}
	view(t, s, func(tx meta.Tx) error {
		return tx.StagedKey([]byte(key), func(id string, r meta.Staged) error {
			got[id] = r
			return nil
		})
	})
	for id, w := range want {
		if g, ok := got[id]; !ok || !sameRow(g, w) || g.Seq != w.Seq {
			t.Errorf("StagedKey(%q) of %s = %v (found %t), want %v", key, id, g, ok, w)
		}
	}
	for id := range got {
		if _, ok := want[id]; !ok {
			t.Errorf("StagedKey(%q) reports %s, which does not hold it", key, id)
		}
	}
}
