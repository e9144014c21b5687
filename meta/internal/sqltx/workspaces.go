package sqltx

import (
	"database/sql"
	"fmt"
	"io/fs"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/meta"
)

const (
	workspaceColumns = `id, tenant, name, root, parent_id, origin_checkpoint, max_bytes, max_entries, created_at, updated_at`
	// readColumns are the columns a read returns: workspaceColumns and
	// the head generation, which a new workspace starts at 0.
	readColumns = workspaceColumns + `, head_gen`

	qCreateWorkspace = `INSERT INTO workspaces (` + workspaceColumns + `)
		SELECT $1, $2, $3, $4, $5, $6, $7, $8, COALESCE($9, clock.now), COALESCE($10, $9, clock.now)
		FROM (SELECT ` + nowFunc + `() AS now) AS clock
		RETURNING created_at, updated_at`
	qWorkspace       = `SELECT ` + readColumns + ` FROM workspaces WHERE id = $1`
	qWorkspaceByName = `SELECT ` + readColumns + ` FROM workspaces WHERE tenant = $1 AND name = $2`
	qWorkspaces      = `SELECT ` + readColumns + ` FROM workspaces ORDER BY name, tenant`
	qHeadGen         = `SELECT head_gen FROM workspaces WHERE id = $1`
	qAdvanceHead     = `UPDATE workspaces SET head_gen = head_gen + 1 WHERE id = $1 AND head_gen = $2`
	qSetRoot         = `UPDATE workspaces SET root = $2, updated_at = ` + nowFunc + `() WHERE id = $1`
	qSetQuota        = `UPDATE workspaces SET max_bytes = $2, max_entries = $3 WHERE id = $1`
	qDeleteWorkspace = `DELETE FROM workspaces WHERE id = $1`
	// qReferrers lists the records referring to workspace $1's records;
	// qWriteOutRef makes one hold rows $3 instead.
	qReferrers   = `SELECT workspace_id, ver, ref_base, ref_ver FROM staging_records WHERE ref_ws = $1 ORDER BY workspace_id, ver`
	qWriteOutRef = `UPDATE staging_records SET body = $3, ref_ws = NULL, ref_base = NULL, ref_ver = NULL WHERE workspace_id = $1 AND ver = $2`
)

// CreateWorkspace implements meta.Tx. An empty ID or Name is fs.ErrInvalid;
// an empty Tenant is meta.DefaultTenant.
// A zero UpdatedAt takes CreatedAt's value; both are written back into w.
func (t *Tx) CreateWorkspace(w *meta.Workspace) error {
	op := fmt.Sprintf("create workspace %q", w.Name)
	if w.ID == "" || w.Name == "" {
		return fmt.Errorf("%s: %w: empty id or name", op, fs.ErrInvalid)
	}
	if w.Tenant == "" {
		w.Tenant = meta.DefaultTenant
	}
	var created, updated int64
	err := t.queryRow(op, true, qCreateWorkspace, []any{
		w.ID, w.Tenant, w.Name, rootArg(w.Root), w.ParentID, w.OriginCheckpoint,
		w.Quota.MaxBytes, w.Quota.MaxEntries, toNanos(w.CreatedAt), toNanos(w.UpdatedAt),
	}, &created, &updated)
	if err != nil {
		return err
	}
	w.CreatedAt, w.UpdatedAt = fromNanos(created), fromNanos(updated)
	return nil
}

// Workspace implements meta.Tx.
func (t *Tx) Workspace(id string) (*meta.Workspace, error) {
	return t.oneWorkspace(fmt.Sprintf("get workspace %q", id), qWorkspace, id)
}

// WorkspaceByName implements meta.Tx.
func (t *Tx) WorkspaceByName(tenant, name string) (*meta.Workspace, error) {
	return t.oneWorkspace(fmt.Sprintf("get workspace named %q", name), qWorkspaceByName, tenant, name)
}

func (t *Tx) oneWorkspace(op, query string, args ...any) (*meta.Workspace, error) {
	var w *meta.Workspace
	err := t.query(op, query, args, func(rows *sql.Rows) (err error) {
		w, err = scanWorkspace(rows)
		return err
	})
	if err == nil && w == nil {
		err = fmt.Errorf("%s: %w", op, errNoRow)
	}
	return w, err
}

// Workspaces implements meta.Tx.
func (t *Tx) Workspaces() ([]meta.Workspace, error) {
	var ws []meta.Workspace
	err := t.query("list workspaces", qWorkspaces, nil, func(rows *sql.Rows) error {
		w, err := scanWorkspace(rows)
		if err == nil {
			ws = append(ws, *w)
		}
		return err
	})
	return ws, err
}

func scanWorkspace(rows *sql.Rows) (*meta.Workspace, error) {
	var (
		w                meta.Workspace
		root             []byte
		created, updated int64
	)
	if err := rows.Scan(&w.ID, &w.Tenant, &w.Name, &root, &w.ParentID, &w.OriginCheckpoint,
		&w.Quota.MaxBytes, &w.Quota.MaxEntries, &created, &updated, &w.HeadGen); err != nil {
		return nil, err
	}
	var err error
	if w.Root, err = scanRoot(root); err != nil {
		return nil, err
	}
	w.CreatedAt, w.UpdatedAt = fromNanos(created), fromNanos(updated)
	return &w, nil
}

// SetRoot implements meta.Tx. A missing workspace is fs.ErrNotExist.
func (t *Tx) SetRoot(id string, root cas.Hash) error {
	return t.execOne(fmt.Sprintf("set root of workspace %q", id), qSetRoot, id, rootArg(root))
}

// CheckHead implements meta.Tx.
func (t *Tx) CheckHead(id string, gen int64) error {
	op := fmt.Sprintf("check head of workspace %q", id)
	var have int64
	found := false
	err := t.query(op, qHeadGen, []any{id}, func(rows *sql.Rows) error {
		found = true
		return rows.Scan(&have)
	})
	switch {
	case err != nil:
		return err
	case !found:
		return fmt.Errorf("%s: %w", op, errNoRow)
	case have != gen:
		return fmt.Errorf("%s: at generation %d, not %d: %w", op, have, gen, meta.ErrHeadMoved)
	}
	return nil
}

// AdvanceHead implements meta.Tx: one conditional UPDATE, so under
// PostgreSQL's SERIALIZABLE two processes advancing from one generation
// cannot both succeed.
func (t *Tx) AdvanceHead(id string, gen int64) error {
	op := fmt.Sprintf("advance head of workspace %q", id)
	res, err := t.exec(op, qAdvanceHead, id, gen)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("%s: %w", op, err)
	} else if n == 1 {
		return nil
	}
	return t.CheckHead(id, gen) // not found, or another generation
}

// SetQuota implements meta.Tx. A missing workspace is fs.ErrNotExist.
func (t *Tx) SetQuota(id string, q meta.Quota) error {
	return t.execOne(fmt.Sprintf("set quota of workspace %q", id), qSetQuota, id, q.MaxBytes, q.MaxEntries)
}

// DeleteWorkspace implements meta.Tx. Checkpoints and staging rows go with
// the workspace (ON DELETE CASCADE); the records of other workspaces that
// refer to its records (forks of it, docs/decisions/028) get the rows
// they read there written into them first. A missing workspace is
// fs.ErrNotExist.
func (t *Tx) DeleteWorkspace(id string) error {
	op := fmt.Sprintf("delete workspace %q", id)
	if err := t.writeOutRefs(op, id); err != nil {
		return err
	}
	return t.execOne(op, qDeleteWorkspace, id)
}

// writeOutRefs turns every record referring to workspace id's records into
// one holding the rows it reads there, so it no longer needs them. Forks
// taken while id's delta did not change refer to the same records: those
// are read once.
func (t *Tx) writeOutRefs(op, id string) error {
	type referrer struct {
		ws  string
		ver int64
		ref span
	}
	var refs []referrer
	err := t.query(op, qReferrers, []any{id}, func(rows *sql.Rows) error {
		r := referrer{ref: span{ws: id}}
		err := rows.Scan(&r.ws, &r.ver, &r.ref.base, &r.ref.ver)
		refs = append(refs, r)
		return err
	})
	if err != nil {
		return err
	}
	bodies := map[span][]byte{}
	for _, r := range refs {
		body, ok := bodies[r.ref]
		if !ok {
			rows, err := t.spanRows(op, r.ref)
			if err != nil {
				return err
			}
			body = meta.AppendDelta(nil, rows)
			bodies[r.ref] = body
		}
		if err := t.execOne(op, qWriteOutRef, r.ws, r.ver, body); err != nil {
			return err
		}
	}
	return nil
}
