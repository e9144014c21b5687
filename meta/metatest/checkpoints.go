package metatest

import (
	"context"
	"fmt"
	"io/fs"
	"maps"
	"testing"
	"time"

	"github.com/forkspace/forkspace/meta"
)

func testCheckpoints(t *testing.T, s meta.Store) {
	createWorkspaces(t, s, "w", "v")
	w := workspace("w")
	var made []meta.Checkpoint
	for i := range 5 {
		c := meta.Checkpoint{ID: fmt.Sprintf("cp-%d", 9-i), WorkspaceID: w.ID, Label: fmt.Sprintf("step %d", i), Root: hashOf(fmt.Sprint(i))}
		if i == 2 {
			c.Root = [32]byte{} // an empty tree is a valid checkpoint
		}
		update(t, s, func(tx meta.Tx) error { return tx.CreateCheckpoint(&c) })
		if c.CreatedAt.IsZero() || !closeTo(c.CreatedAt, time.Now(), time.Minute) {
			t.Errorf("CreateCheckpoint set CreatedAt %v, want the database's now", c.CreatedAt)
		}
		made = append(made, c)
	}
	update(t, s, func(tx meta.Tx) error {
		return tx.CreateCheckpoint(&meta.Checkpoint{ID: "cp-other", WorkspaceID: "id-v"})
	})
	view(t, s, func(tx meta.Tx) error {
		cs, err := tx.Checkpoints(w.ID)
		if err != nil || len(cs) != len(made) {
			t.Errorf("Checkpoints = %v, %v; want %d", cs, err, len(made))
			return nil
		}
		for i, c := range cs {
			if d := sameCheckpoint(c, made[i]); d != "" {
				t.Errorf("Checkpoints[%d] (oldest first): %s", i, d)
			}
		}
		got, err := tx.Checkpoint(made[2].ID)
		if err != nil {
			t.Errorf("Checkpoint: %v", err)
		} else if d := sameCheckpoint(*got, made[2]); d != "" {
			t.Errorf("Checkpoint: %s", d)
		}
		_, err = tx.Checkpoint("cp-missing")
		wantErr(t, "Checkpoint of a missing id", err, fs.ErrNotExist)
		if cs, err := tx.Checkpoints("id-missing"); err != nil || len(cs) != 0 {
			t.Errorf("Checkpoints of a missing workspace = %v, %v; want none", cs, err)
		}
		counts, err := tx.CheckpointCounts()
		if want := map[string]int{w.ID: len(made), "id-v": 1}; err != nil || !maps.Equal(counts, want) {
			t.Errorf("CheckpointCounts = %v, %v; want %v", counts, err, want)
		}
		return nil
	})

	bad := []struct {
		name string
		c    meta.Checkpoint
		want error
	}{
		{"duplicate id", meta.Checkpoint{ID: made[0].ID, WorkspaceID: w.ID}, fs.ErrExist},
		{"duplicate id of another workspace", meta.Checkpoint{ID: "cp-other", WorkspaceID: w.ID}, fs.ErrExist},
		{"missing workspace", meta.Checkpoint{ID: "cp-new", WorkspaceID: "id-missing"}, fs.ErrNotExist},
		{"empty id", meta.Checkpoint{WorkspaceID: w.ID}, fs.ErrInvalid},
	}
	for _, b := range bad {
		err := s.Update(context.Background(), func(tx meta.Tx) error { return tx.CreateCheckpoint(&b.c) })
		wantErr(t, "CreateCheckpoint with "+b.name, err, b.want)
	}

	update(t, s, func(tx meta.Tx) error { return tx.DeleteCheckpoint(made[1].ID) })
	err := s.Update(context.Background(), func(tx meta.Tx) error { return tx.DeleteCheckpoint(made[1].ID) })
	wantErr(t, "DeleteCheckpoint twice", err, fs.ErrNotExist)
	view(t, s, func(tx meta.Tx) error {
		cs, err := tx.Checkpoints(w.ID)
		if err != nil || len(cs) != len(made)-1 || cs[1].ID != made[2].ID {
			t.Errorf("after delete: Checkpoints = %v, %v", cs, err)
		}
		_, err = tx.Checkpoint(made[1].ID)
		wantErr(t, "Checkpoint after delete", err, fs.ErrNotExist)
		return nil
	})
}

// sameCheckpoint reports how got differs from want ("" if equal).
func sameCheckpoint(got, want meta.Checkpoint) string {
	if got.ID != want.ID || got.WorkspaceID != want.WorkspaceID || got.Label != want.Label ||
		got.Root != want.Root || !got.CreatedAt.Equal(want.CreatedAt) {
		return fmt.Sprintf("got %+v, want %+v", got, want)
	}
	return ""
}
