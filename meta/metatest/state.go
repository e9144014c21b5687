package metatest

import (
	"io/fs"
	"slices"
	"testing"
	"time"

	"github.com/forkspace/forkspace/meta"
)

// testStateCopies checks the StateTx clauses: copies of staging deltas
// between workspaces and checkpoints are independent afterwards, replace
// what the destination had, and fold away.
func testStateCopies(t *testing.T, s meta.Store) {
	createWorkspaces(t, s, "src", "dst")
	src, dst := workspace("src").ID, workspace("dst").ID
	rows := []meta.Staged{
		{Key: []byte("a"), Value: []byte("1"), Seq: 1},
		{Key: []byte("b"), Deleted: true, Seq: 2},
	}
	update(t, s, func(tx meta.Tx) error {
		if err := tx.PutStaged(src, rows); err != nil {
			return err
		}
		if err := tx.PutStaged(dst, []meta.Staged{{Key: []byte("old"), Value: []byte("x"), Seq: 9}}); err != nil {
			return err
		}
		if err := tx.CreateCheckpoint(&meta.Checkpoint{ID: "cp", WorkspaceID: src, Root: hashOf("root")}); err != nil {
			return err
		}
		if err := tx.SnapshotStaged(src, "cp"); err != nil {
			return err
		}
		return tx.CopyStaged(src, dst)
	})
	checkStaged(t, s, dst, rows) // "old" was replaced
	checkCheckpointStaged(t, s, "cp", rows)

	// Later writes to one owner do not show in the copies.
	update(t, s, func(tx meta.Tx) error {
		return tx.PutStaged(src, []meta.Staged{{Key: []byte("c"), Value: []byte("3"), Seq: 3}})
	})
	checkStaged(t, s, dst, rows)
	checkCheckpointStaged(t, s, "cp", rows)
	update(t, s, func(tx meta.Tx) error {
		return tx.PutStaged(dst, []meta.Staged{{Key: []byte("a"), Value: []byte("changed"), Seq: 4}})
	})
	checkCheckpointStaged(t, s, "cp", rows)

	// A fold of the owner, and pruning its history, leave the
	// checkpoint's rows as they were.
	update(t, s, func(tx meta.Tx) error {
		if err := tx.DeleteStaged(src, 100); err != nil {
			return err
		}
		if h, ok := tx.(meta.HistoryTx); ok {
			_, err := h.PruneStates(src, 0, time.Time{})
			return err
		}
		return nil
	})
	checkStaged(t, s, src, nil)
	checkCheckpointStaged(t, s, "cp", rows)

	var unfolded []string
	view(t, s, func(tx meta.Tx) (err error) {
		unfolded, err = tx.UnfoldedCheckpoints()
		return err
	})
	if !slices.Equal(unfolded, []string{"cp"}) {
		t.Errorf("UnfoldedCheckpoints = %v, want [cp]", unfolded)
	}
	update(t, s, func(tx meta.Tx) error { return tx.FoldCheckpoint("cp", hashOf("folded")) })
	checkCheckpointStaged(t, s, "cp", nil)
	view(t, s, func(tx meta.Tx) error {
		c, err := tx.Checkpoint("cp")
		if err != nil {
			return err
		}
		if c.Root != hashOf("folded") {
			t.Errorf("folded checkpoint root = %s", c.Root.Short())
		}
		ids, err := tx.UnfoldedCheckpoints()
		if len(ids) != 0 {
			t.Errorf("UnfoldedCheckpoints after fold = %v", ids)
		}
		return err
	})

	// Deleting a checkpoint (or its workspace) deletes its rows.
	update(t, s, func(tx meta.Tx) error {
		if err := tx.CreateCheckpoint(&meta.Checkpoint{ID: "cp2", WorkspaceID: src}); err != nil {
			return err
		}
		return tx.SnapshotStaged(src, "cp2")
	})
	// A checkpoint of another workspace taking src's delta keeps it when
	// src goes.
	late := []meta.Staged{{Key: []byte("late"), Value: []byte("5"), Seq: 5}}
	update(t, s, func(tx meta.Tx) error {
		if err := tx.PutStaged(src, late); err != nil {
			return err
		}
		if err := tx.CreateCheckpoint(&meta.Checkpoint{ID: "cp3", WorkspaceID: dst}); err != nil {
			return err
		}
		return tx.SnapshotStaged(src, "cp3")
	})
	update(t, s, func(tx meta.Tx) error { return tx.DeleteWorkspace(src) })
	checkCheckpointStaged(t, s, "cp2", nil)
	checkCheckpointStaged(t, s, "cp3", late)

	err := s.Update(t.Context(), func(tx meta.Tx) error { return tx.CopyStaged("missing", dst) })
	wantErr(t, "CopyStaged from a missing workspace", err, fs.ErrNotExist)
	err = s.Update(t.Context(), func(tx meta.Tx) error { return tx.SnapshotStaged(dst, "missing") })
	wantErr(t, "SnapshotStaged to a missing checkpoint", err, fs.ErrNotExist)
	err = s.Update(t.Context(), func(tx meta.Tx) error { return tx.FoldCheckpoint("missing", hashOf("x")) })
	wantErr(t, "FoldCheckpoint of a missing checkpoint", err, fs.ErrNotExist)
}

func checkCheckpointStaged(t testing.TB, s meta.Store, id string, want []meta.Staged) {
	t.Helper()
	var got []meta.Staged
	view(t, s, func(tx meta.Tx) (err error) {
		got, err = tx.CheckpointStaged(id)
		return err
	})
	if d := diffStaged(got, want); d != "" {
		t.Errorf("CheckpointStaged(%q): %s", id, d)
	}
}
