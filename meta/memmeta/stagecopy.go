package memmeta

import (
	"fmt"
	"maps"
	"slices"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/meta"
)

// Checkpoint staging rows live in the staging map under checkpointOwner(id),
// beside the workspaces' tables. Published tables are never modified, so a
// copy shares the table and the next write to either owner clones it.
func checkpointOwner(id string) string { return "checkpoint\x00" + id }

// share makes dst's staging table the same (immutable) table as src's.
func (t *tx) share(src, dst string) {
	t.owned.own("staging", func() { t.s.staging = maps.Clone(t.s.staging) })
	if t.owned.staging == nil {
		t.owned.staging = map[string]bool{}
	}
	if rows, ok := t.s.staging[src]; ok && len(rows) > 0 {
		t.s.staging[dst] = rows
	} else {
		delete(t.s.staging, dst)
	}
	// Neither owner may now write the shared table in place.
	t.owned.staging[src], t.owned.staging[dst] = false, false
}

func (t *tx) needWorkspace(op, id string) error {
	if _, ok := t.s.workspaces[id]; !ok {
		return notExist(fmt.Sprintf("%s: workspace %q", op, id))
	}
	return nil
}

func (t *tx) needCheckpoint(op, id string) error {
	if _, ok := t.s.checkpoints[id]; !ok {
		return notExist(fmt.Sprintf("%s: checkpoint %q", op, id))
	}
	return nil
}

// CopyStaged implements meta.Tx.
func (t *tx) CopyStaged(src, dst string) error {
	op := fmt.Sprintf("copy staging rows of workspace %q to %q", src, dst)
	if err := t.writable(op); err != nil {
		return err
	}
	if err := t.needWorkspace(op, src); err != nil {
		return err
	}
	if err := t.needWorkspace(op, dst); err != nil {
		return err
	}
	t.share(src, dst)
	return nil
}

// SnapshotStaged implements meta.Tx.
func (t *tx) SnapshotStaged(workspaceID, checkpointID string) error {
	op := fmt.Sprintf("copy staging rows of workspace %q to checkpoint %q", workspaceID, checkpointID)
	if err := t.writable(op); err != nil {
		return err
	}
	if err := t.needWorkspace(op, workspaceID); err != nil {
		return err
	}
	if err := t.needCheckpoint(op, checkpointID); err != nil {
		return err
	}
	t.share(workspaceID, checkpointOwner(checkpointID))
	return nil
}

// CheckpointStaged implements meta.Tx.
func (t *tx) CheckpointStaged(checkpointID string) ([]meta.Staged, error) {
	return t.Staged(checkpointOwner(checkpointID))
}

// FoldCheckpoint implements meta.Tx.
func (t *tx) FoldCheckpoint(checkpointID string, root cas.Hash) error {
	op := fmt.Sprintf("fold checkpoint %q", checkpointID)
	if err := t.write(op, "checkpoints", func() { t.s.checkpoints = maps.Clone(t.s.checkpoints) }); err != nil {
		return err
	}
	c, ok := t.s.checkpoints[checkpointID]
	if !ok {
		return notExist(op)
	}
	c.Root = root
	t.s.checkpoints[checkpointID] = c
	t.dropCheckpointStaging(checkpointID)
	return nil
}

// dropCheckpointStaging removes a checkpoint's staging table.
func (t *tx) dropCheckpointStaging(checkpointID string) {
	t.owned.own("staging", func() { t.s.staging = maps.Clone(t.s.staging) })
	delete(t.s.staging, checkpointOwner(checkpointID))
}

// UnfoldedCheckpoints implements meta.Tx.
func (t *tx) UnfoldedCheckpoints() ([]string, error) {
	var ids []string
	for id := range t.s.checkpoints {
		if len(t.s.staging[checkpointOwner(id)]) > 0 {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids, nil
}
