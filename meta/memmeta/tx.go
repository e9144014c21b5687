package memmeta

import (
	"bytes"
	"cmp"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/meta"
)

// tx is a meta.Tx over one state: the published snapshot in a View, the
// private successor in an Update.
type tx struct {
	store    *Store
	s        *state
	readOnly bool
	owned    owned
	// finished is set when the Update function returned: a leaked Tx must
	// not change a published snapshot.
	finished atomic.Bool
}

var _ meta.Tx = (*tx)(nil)

// writable fails unless the transaction may write.
func (t *tx) writable(op string) error {
	if t.readOnly {
		return fmt.Errorf("%s: %w: view transaction", op, errdefs.ErrReadOnly)
	}
	if t.finished.Load() {
		return fmt.Errorf("%s: transaction used after its function returned: %w", op, fs.ErrClosed)
	}
	return nil
}

// write checks that the transaction may write and makes table private.
func (t *tx) write(op, table string, copyTable func()) error {
	if err := t.writable(op); err != nil {
		return err
	}
	t.owned.own(table, copyTable)
	return nil
}

func notExist(op string) error { return fmt.Errorf("%s: %w", op, fs.ErrNotExist) }

// Now implements meta.Tx.
func (t *tx) Now() (time.Time, error) { return t.store.now(), nil }

// CollectionClock implements meta.GCTx: Updates run one at a time, so none
// is in flight.
func (t *tx) CollectionClock() (time.Time, error) {
	if err := t.writable("read collection clock"); err != nil {
		return time.Time{}, err
	}
	return t.Now()
}

// Setting implements meta.Tx.
func (t *tx) Setting(key string) (string, error) {
	v, ok := t.s.settings[key]
	if !ok {
		return "", notExist(fmt.Sprintf("get setting %q", key))
	}
	return v, nil
}

// SetSetting implements meta.Tx.
func (t *tx) SetSetting(key, value string) error {
	if err := t.write("set setting", "settings", func() { t.s.settings = maps.Clone(t.s.settings) }); err != nil {
		return err
	}
	t.s.settings[key] = value
	return nil
}

// Allocate implements meta.Tx. n must be positive (fs.ErrInvalid).
func (t *tx) Allocate(name string, n int64) (int64, error) {
	op := fmt.Sprintf("allocate %d from counter %q", n, name)
	if n <= 0 {
		return 0, fmt.Errorf("%s: %w: count must be positive", op, fs.ErrInvalid)
	}
	if err := t.write(op, "counters", func() { t.s.counters = maps.Clone(t.s.counters) }); err != nil {
		return 0, err
	}
	first := max(t.s.counters[name], 1)
	t.s.counters[name] = first + n
	return first, nil
}

// PutNodes implements meta.Tx.
func (t *tx) PutNodes(nodes []meta.Object) error {
	if err := t.write("put node", "nodes", func() { t.s.nodes = maps.Clone(t.s.nodes) }); err != nil {
		return err
	}
	putObjects(t.s.nodes, nodes, t.store.now())
	return nil
}

// PutInline implements meta.Tx.
func (t *tx) PutInline(bodies []meta.Object) error {
	if err := t.write("put inline body", "inline", func() { t.s.inline = maps.Clone(t.s.inline) }); err != nil {
		return err
	}
	putObjects(t.s.inline, bodies, t.store.now())
	return nil
}

// putObjects stores objs, touching those that exist (their bytes stay).
func putObjects(table map[cas.Hash]object, objs []meta.Object, now time.Time) {
	for _, o := range objs {
		old, ok := table[o.Hash]
		if !ok {
			old.data = append([]byte{}, o.Data...)
		}
		old.touched = now
		table[o.Hash] = old
	}
}

// CreateWorkspace implements meta.Tx.
func (t *tx) CreateWorkspace(w *meta.Workspace) error {
	op := fmt.Sprintf("create workspace %q", w.Name)
	if w.ID == "" || w.Name == "" {
		return fmt.Errorf("%s: %w: empty id or name", op, fs.ErrInvalid)
	}
	if err := t.write(op, "workspaces", func() { t.s.workspaces = maps.Clone(t.s.workspaces) }); err != nil {
		return err
	}
	if w.Tenant == "" {
		w.Tenant = meta.DefaultTenant
	}
	if _, err := t.WorkspaceByName(w.Tenant, w.Name); err == nil {
		return fmt.Errorf("%s: name: %w", op, fs.ErrExist)
	}
	if _, ok := t.s.workspaces[w.ID]; ok {
		return fmt.Errorf("%s: id %q: %w", op, w.ID, fs.ErrExist)
	}
	if w.CreatedAt.IsZero() {
		w.CreatedAt = t.store.now()
	}
	if w.UpdatedAt.IsZero() {
		w.UpdatedAt = w.CreatedAt
	}
	w.CreatedAt, w.UpdatedAt = w.CreatedAt.Round(0), w.UpdatedAt.Round(0)
	t.s.workspaces[w.ID] = *w
	return nil
}

// Workspace implements meta.Tx.
func (t *tx) Workspace(id string) (*meta.Workspace, error) {
	w, ok := t.s.workspaces[id]
	if !ok {
		return nil, notExist(fmt.Sprintf("get workspace %q", id))
	}
	return &w, nil
}

// WorkspaceByName implements meta.Tx.
func (t *tx) WorkspaceByName(tenant, name string) (*meta.Workspace, error) {
	for _, w := range t.s.workspaces {
		if w.Name == name && w.Tenant == tenant {
			return &w, nil
		}
	}
	return nil, notExist(fmt.Sprintf("get workspace named %q", name))
}

// Workspaces implements meta.Tx: ordered by name, then tenant.
func (t *tx) Workspaces() ([]meta.Workspace, error) {
	ws := slices.Collect(maps.Values(t.s.workspaces))
	slices.SortFunc(ws, func(a, b meta.Workspace) int {
		return cmp.Or(strings.Compare(a.Name, b.Name), strings.Compare(a.Tenant, b.Tenant))
	})
	return ws, nil
}

// changeWorkspace applies change to an existing workspace.
func (t *tx) changeWorkspace(op, id string, change func(*meta.Workspace)) error {
	if err := t.write(op, "workspaces", func() { t.s.workspaces = maps.Clone(t.s.workspaces) }); err != nil {
		return err
	}
	w, ok := t.s.workspaces[id]
	if !ok {
		return notExist(op)
	}
	change(&w)
	t.s.workspaces[id] = w
	return nil
}

// SetRoot implements meta.Tx.
func (t *tx) SetRoot(id string, root cas.Hash) error {
	return t.changeWorkspace(fmt.Sprintf("set root of workspace %q", id), id, func(w *meta.Workspace) {
		w.Root, w.UpdatedAt = root, t.store.now()
	})
}

// CheckHead implements meta.Tx.
func (t *tx) CheckHead(id string, gen int64) error {
	w, err := t.Workspace(id)
	if err != nil {
		return err
	}
	return headIs(w, gen)
}

// AdvanceHead implements meta.Tx.
func (t *tx) AdvanceHead(id string, gen int64) error {
	if err := t.CheckHead(id, gen); err != nil {
		return err
	}
	return t.changeWorkspace(fmt.Sprintf("advance head of workspace %q", id), id, func(w *meta.Workspace) { w.HeadGen++ })
}

// headIs fails with meta.ErrHeadMoved unless w's head generation is gen.
func headIs(w *meta.Workspace, gen int64) error {
	if w.HeadGen != gen {
		return fmt.Errorf("workspace %q at head generation %d, not %d: %w", w.ID, w.HeadGen, gen, meta.ErrHeadMoved)
	}
	return nil
}

// SetQuota implements meta.Tx.
func (t *tx) SetQuota(id string, q meta.Quota) error {
	return t.changeWorkspace(fmt.Sprintf("set quota of workspace %q", id), id, func(w *meta.Workspace) { w.Quota = q })
}

// DeleteWorkspace implements meta.Tx, with its checkpoints and staging rows.
func (t *tx) DeleteWorkspace(id string) error {
	op := fmt.Sprintf("delete workspace %q", id)
	if err := t.changeWorkspace(op, id, func(*meta.Workspace) {}); err != nil {
		return err
	}
	delete(t.s.workspaces, id)
	t.owned.own("checkpoints", func() { t.s.checkpoints = maps.Clone(t.s.checkpoints) })
	maps.DeleteFunc(t.s.checkpoints, func(cid string, c meta.Checkpoint) bool {
		if c.WorkspaceID == id {
			t.dropCheckpointStaging(cid)
			return true
		}
		return false
	})
	t.owned.own("staging", func() { t.s.staging = maps.Clone(t.s.staging) })
	delete(t.s.staging, id)
	t.owned.own("conflicts", func() { t.s.conflicts = maps.Clone(t.s.conflicts) })
	delete(t.s.conflicts, id)
	t.dropHistory(id)
	return nil
}

// CreateCheckpoint implements meta.Tx.
func (t *tx) CreateCheckpoint(c *meta.Checkpoint) error {
	op := fmt.Sprintf("create checkpoint %q", c.ID)
	if c.ID == "" || c.WorkspaceID == "" {
		return fmt.Errorf("%s: %w: empty id or workspace id", op, fs.ErrInvalid)
	}
	if err := t.write(op, "checkpoints", func() { t.s.checkpoints = maps.Clone(t.s.checkpoints) }); err != nil {
		return err
	}
	if _, ok := t.s.checkpoints[c.ID]; ok {
		return fmt.Errorf("%s: %w", op, fs.ErrExist)
	}
	if _, ok := t.s.workspaces[c.WorkspaceID]; !ok {
		return notExist(fmt.Sprintf("%s: workspace %q", op, c.WorkspaceID))
	}
	if c.CreatedAt.IsZero() {
		c.CreatedAt = t.store.now()
	}
	c.CreatedAt = c.CreatedAt.Round(0)
	t.s.checkpoints[c.ID] = *c
	return nil
}

// Checkpoint implements meta.Tx.
func (t *tx) Checkpoint(id string) (*meta.Checkpoint, error) {
	c, ok := t.s.checkpoints[id]
	if !ok {
		return nil, notExist(fmt.Sprintf("get checkpoint %q", id))
	}
	return &c, nil
}

// Checkpoints implements meta.Tx: oldest first, ties broken by ID.
func (t *tx) Checkpoints(workspaceID string) ([]meta.Checkpoint, error) {
	var cs []meta.Checkpoint
	for _, c := range t.s.checkpoints {
		if c.WorkspaceID == workspaceID {
			cs = append(cs, c)
		}
	}
	slices.SortFunc(cs, func(a, b meta.Checkpoint) int {
		if n := a.CreatedAt.Compare(b.CreatedAt); n != 0 {
			return n
		}
		return strings.Compare(a.ID, b.ID)
	})
	return cs, nil
}

// CheckpointCounts implements meta.Tx.
func (t *tx) CheckpointCounts() (map[string]int, error) {
	counts := map[string]int{}
	for _, c := range t.s.checkpoints {
		if c.Kind == meta.CheckpointUser {
			counts[c.WorkspaceID]++
		}
	}
	return counts, nil
}

// DeleteCheckpoint implements meta.Tx.
func (t *tx) DeleteCheckpoint(id string) error {
	op := fmt.Sprintf("delete checkpoint %q", id)
	if err := t.write(op, "checkpoints", func() { t.s.checkpoints = maps.Clone(t.s.checkpoints) }); err != nil {
		return err
	}
	if _, ok := t.s.checkpoints[id]; !ok {
		return notExist(op)
	}
	delete(t.s.checkpoints, id)
	t.dropCheckpointStaging(id)
	return nil
}

// PutStaged implements meta.Tx.
func (t *tx) PutStaged(workspaceID string, rows []meta.Staged) error {
	op := fmt.Sprintf("put staging rows of workspace %q", workspaceID)
	if err := t.writable(op); err != nil {
		return err
	}
	if _, ok := t.s.workspaces[workspaceID]; !ok {
		return notExist(op)
	}
	putRows(t.owned.ownStaging(t.s, workspaceID), rows)
	return nil
}

// putRows writes copies of rows into a staging table.
func putRows(table map[string]meta.Staged, rows []meta.Staged) {
	for _, r := range rows {
		r.Key, r.Value = bytes.Clone(r.Key), bytes.Clone(r.Value)
		if r.Key == nil {
			r.Key = []byte{}
		}
		if len(r.Value) == 0 {
			r.Value = nil
		}
		table[string(r.Key)] = r
	}
}

// Staged implements meta.Tx: rows ordered by key, bytewise; an empty Value
// reads back as nil.
func (t *tx) Staged(workspaceID string) ([]meta.Staged, error) {
	table := t.s.staging[workspaceID]
	out := make([]meta.Staged, 0, len(table))
	for _, r := range table {
		r.Key, r.Value = bytes.Clone(r.Key), bytes.Clone(r.Value)
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b meta.Staged) int { return bytes.Compare(a.Key, b.Key) })
	return out, nil
}

// StagedKey implements meta.Tx.
func (t *tx) StagedKey(key []byte, fn func(string, meta.Staged) error) error {
	for _, id := range slices.Sorted(maps.Keys(t.s.workspaces)) {
		r, ok := t.s.staging[id][string(key)]
		if !ok {
			continue
		}
		r.Key, r.Value = bytes.Clone(r.Key), bytes.Clone(r.Value)
		if err := fn(id, r); err != nil {
			return err
		}
	}
	return nil
}

// DeleteStaged implements meta.Tx.
func (t *tx) DeleteStaged(workspaceID string, maxSeq int64) error {
	if err := t.writable(fmt.Sprintf("delete staging rows of workspace %q", workspaceID)); err != nil {
		return err
	}
	if _, ok := t.s.staging[workspaceID]; !ok {
		return nil
	}
	table := t.owned.ownStaging(t.s, workspaceID)
	maps.DeleteFunc(table, func(_ string, r meta.Staged) bool { return r.Seq <= maxSeq })
	return nil
}
