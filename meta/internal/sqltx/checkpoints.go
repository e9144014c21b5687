package sqltx

import (
	"database/sql"
	"fmt"
	"io/fs"

	"github.com/forkspace/forkspace/meta"
)

const (
	checkpointColumns = `id, workspace_id, label, root, created_at, kind, source`

	qCreateCheckpoint = `INSERT INTO checkpoints (` + checkpointColumns + `)
		VALUES ($1, $2, $3, $4, COALESCE($5, ` + nowFunc + `()), $6, $7)
		RETURNING created_at`
	qCheckpoint       = `SELECT ` + checkpointColumns + ` FROM checkpoints WHERE id = $1`
	qCheckpoints      = `SELECT ` + checkpointColumns + ` FROM checkpoints WHERE workspace_id = $1 ORDER BY created_at, id`
	qDeleteCheckpoint = `DELETE FROM checkpoints WHERE id = $1`
	qCheckpointCounts = `SELECT workspace_id, COUNT(*) FROM checkpoints WHERE kind = '' GROUP BY workspace_id`
)

// CreateCheckpoint implements meta.Tx. An empty ID or WorkspaceID is
// fs.ErrInvalid, a missing workspace fs.ErrNotExist. A zero CreatedAt is
// set from the database clock and written back into c.
func (t *Tx) CreateCheckpoint(c *meta.Checkpoint) error {
	op := fmt.Sprintf("create checkpoint %q", c.ID)
	if c.ID == "" || c.WorkspaceID == "" {
		return fmt.Errorf("%s: %w: empty id or workspace id", op, fs.ErrInvalid)
	}
	var created int64
	err := t.queryRow(op, true, qCreateCheckpoint,
		[]any{c.ID, c.WorkspaceID, c.Label, rootArg(c.Root), toNanos(c.CreatedAt), c.Kind, c.Source}, &created)
	if err != nil {
		return err
	}
	c.CreatedAt = fromNanos(created)
	return nil
}

// Checkpoint implements meta.Tx.
func (t *Tx) Checkpoint(id string) (*meta.Checkpoint, error) {
	op := fmt.Sprintf("get checkpoint %q", id)
	var c *meta.Checkpoint
	err := t.query(op, qCheckpoint, []any{id}, func(rows *sql.Rows) (err error) {
		c, err = scanCheckpoint(rows)
		return err
	})
	if err == nil && c == nil {
		err = fmt.Errorf("%s: %w", op, errNoRow)
	}
	return c, err
}

// Checkpoints implements meta.Tx: oldest first, ties broken by ID. An
// unknown workspace has no checkpoints.
func (t *Tx) Checkpoints(workspaceID string) ([]meta.Checkpoint, error) {
	var cs []meta.Checkpoint
	err := t.query(fmt.Sprintf("list checkpoints of workspace %q", workspaceID), qCheckpoints,
		[]any{workspaceID}, func(rows *sql.Rows) error {
			c, err := scanCheckpoint(rows)
			if err == nil {
				cs = append(cs, *c)
			}
			return err
		})
	return cs, err
}

// CheckpointCounts implements meta.Tx with one pass over the
// checkpoints_by_workspace index, counting user checkpoints only.
func (t *Tx) CheckpointCounts() (map[string]int, error) {
	counts := map[string]int{}
	err := t.query("count checkpoints", qCheckpointCounts, nil, func(rows *sql.Rows) error {
		var (
			id string
			n  int
		)
		err := rows.Scan(&id, &n)
		counts[id] = n
		return err
	})
	return counts, err
}

func scanCheckpoint(rows *sql.Rows) (*meta.Checkpoint, error) {
	var (
		c       meta.Checkpoint
		root    []byte
		created int64
	)
	if err := rows.Scan(&c.ID, &c.WorkspaceID, &c.Label, &root, &created, &c.Kind, &c.Source); err != nil {
		return nil, err
	}
	var err error
	if c.Root, err = scanRoot(root); err != nil {
		return nil, err
	}
	c.CreatedAt = fromNanos(created)
	return &c, nil
}

// DeleteCheckpoint implements meta.Tx. A missing checkpoint is
// fs.ErrNotExist.
func (t *Tx) DeleteCheckpoint(id string) error {
	return t.execOne(fmt.Sprintf("delete checkpoint %q", id), qDeleteCheckpoint, id)
}
