package forkspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"time"

	"github.com/forkspace/forkspace/kv"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/mount"
	"github.com/forkspace/forkspace/vfs"
)

// Workspace is the live, writable head of a workspace. Its embedded *vfs.FS
// carries the file operations (Stat, ReadFile, WriteFile, OpenFile, Mkdir,
// Rename, Symlink, Link, Chmod, Chtimes, Truncate, xattrs…) and implements
// io/fs. Handles are shared: Store.Workspace returns the same *Workspace for
// the same workspace until it is deleted or the store closes.
type Workspace struct {
	*vfs.FS
	store  *Store
	id     string
	name   string
	tenant string
	parent string
	mounts mountState
}

// ID returns the workspace's immutable identifier.
func (w *Workspace) ID() string { return w.id }

// Name returns the workspace's name.
func (w *Workspace) Name() string { return w.name }

// ParentID returns the ID of the workspace this one was forked from ("" if
// none). It stays set when the parent is deleted.
func (w *Workspace) ParentID() string { return w.parent }

// CreateOptions configure a new workspace.
type CreateOptions struct {
	// Quota limits the workspace (zero fields: unlimited).
	Quota meta.Quota
	// Mounts is the workspace's mount table (see package mount and
	// Workspace.Mount). Rows parsed from a URL (Spec.Source set) are
	// persisted and rebuilt on reopen with Options.MountDrivers; forks
	// inherit the table.
	Mounts []mount.Spec
}

// Info describes a workspace.
type Info struct {
	ID        string     `json:"id"`
	Name      string     `json:"name"`
	ParentID  string     `json:"parent_id,omitempty"`
	Origin    string     `json:"origin_checkpoint,omitempty"`
	Quota     meta.Quota `json:"quota"`
	CreatedAt time.Time  `json:"created_at"`
	UpdatedAt time.Time  `json:"updated_at"`
	// Entries counts files, directories and symlinks (not the root).
	Entries int64 `json:"entries"`
	// Bytes is the logical size of the regular files.
	Bytes       int64 `json:"bytes"`
	Checkpoints int   `json:"checkpoints"`
	// ExclusiveBytes is the stored size (tree nodes, inline bodies,
	// blobs) that only this workspace, its checkpoints and staging reach:
	// what deleting it would free. SharedBytes is what it reaches that
	// other workspaces reach too. Workspace.Info fills both (it walks the
	// store, see Store.Usage); List leaves them zero.
	ExclusiveBytes int64 `json:"exclusive_bytes"`
	SharedBytes    int64 `json:"shared_bytes"`
	// Conflicts counts the unresolved conflicts of a merge into the
	// workspace (Workspace.Conflicts); Workspace.Info fills it, List
	// leaves it zero.
	Conflicts int `json:"conflicts,omitempty"`
}

// Create makes a new, empty workspace in the tenant of ctx. A name taken
// there is fs.ErrExist; a bad one fs.ErrInvalid.
func (s *Store) Create(ctx context.Context, name string, opts CreateOptions) (*Workspace, error) {
	if err := ValidName(name); err != nil {
		return nil, fmt.Errorf("create workspace: %w", err)
	}
	if opts.Quota.MaxBytes < 0 || opts.Quota.MaxEntries < 0 {
		return nil, fmt.Errorf("create workspace %s: %w: negative quota", name, fs.ErrInvalid)
	}
	root, nodes, err := vfs.NewTree(ctx, s.deps(), time.Now())
	if err != nil {
		return nil, fmt.Errorf("create workspace %s: %w", name, err)
	}
	if _, err := mount.NewTable(opts.Mounts); err != nil {
		return nil, fmt.Errorf("create workspace %s: %w", name, err)
	}
	row := &meta.Workspace{ID: newID(workspacePrefix), Name: name, Tenant: TenantFrom(ctx), Root: root, Quota: opts.Quota}
	w, err := s.insert(ctx, "create workspace", row, func(tx meta.Tx) error {
		if err := persistMounts(tx, row.ID, opts.Mounts); err != nil {
			return err
		}
		return tx.PutNodes(toObjects(nodes))
	})
	if err != nil {
		return nil, err
	}
	if err := w.attachMounts(ctx, opts.Mounts); err != nil {
		return nil, fmt.Errorf("create workspace %s: %w", name, err)
	}
	return w, nil
}

// insert records a new workspace row, runs fill (when not nil) in the same
// transaction to give it its state, and opens it.
func (s *Store) insert(ctx context.Context, op string, row *meta.Workspace, fill func(meta.Tx) error) (*Workspace, error) {
	if err := s.record(ctx, row, fill); err != nil {
		return nil, fmt.Errorf("%s %s: %w", op, row.Name, err)
	}
	return s.openRow(ctx, row, nil)
}

// record records a new workspace row and runs fill (when not nil) in the
// same transaction to give it its state.
func (s *Store) record(ctx context.Context, row *meta.Workspace, fill func(meta.Tx) error) error {
	return s.meta.Update(ctx, func(tx meta.Tx) error {
		if _, err := tx.WorkspaceByName(row.Tenant, row.Name); err == nil {
			return fmt.Errorf("name %q: %w", row.Name, fs.ErrExist)
		}
		if err := tx.CreateTenant(row.Tenant); err != nil {
			return err
		}
		if err := tx.CreateWorkspace(row); err != nil {
			return err
		}
		if fill == nil {
			return nil
		}
		return fill(tx)
	})
}

// Workspace returns the live workspace named ref (a name or an ID) in the
// tenant of ctx. A missing workspace, or one of another tenant, is
// fs.ErrNotExist. A workspace already open is found in memory without
// reading the catalog: this process owns the store (decision 004), names
// never change, and Delete forgets the workspace before it returns. In a
// store several processes share, the open workspace first catches up
// with what other processes committed (one read of its head generation),
// and one another process deleted is forgotten.
func (s *Store) Workspace(ctx context.Context, ref string) (*Workspace, error) {
	if w := s.opened(TenantFrom(ctx), ref); w != nil {
		err := w.CatchUp(ctx)
		if errors.Is(err, fs.ErrNotExist) {
			s.forget(ctx, w.id)
		}
		if err != nil {
			return nil, fmt.Errorf("open workspace %s: %w", ref, err)
		}
		return w, nil
	}
	var row *meta.Workspace
	err := s.meta.View(ctx, func(tx meta.Tx) error {
		var err error
		row, err = lookup(tx, TenantFrom(ctx), ref)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("open workspace %s: %w", ref, err)
	}
	return s.openRow(ctx, row, nil)
}

// lookup finds tenant's workspace row by ID or name; another tenant's is
// fs.ErrNotExist, as a missing one.
func lookup(tx meta.Tx, tenant, ref string) (*meta.Workspace, error) {
	if strings.HasPrefix(ref, workspacePrefix) {
		w, err := tx.Workspace(ref)
		if err == nil && w.Tenant != tenant {
			return nil, fmt.Errorf("get workspace %q: %w", ref, fs.ErrNotExist)
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return w, err
		}
	}
	return tx.WorkspaceByName(tenant, ref)
}

// wsName is a workspace's name in its tenant.
type wsName struct{ tenant, name string }

// opened returns the open workspace of tenant that ref names, or nil
// when none is open (or ref may name something else: a ref shaped like
// an ID is looked up as one first, as lookup does).
func (s *Store) opened(tenant, ref string) *Workspace {
	s.mu.Lock()
	defer s.mu.Unlock()
	w := s.named[wsName{tenant, ref}]
	if strings.HasPrefix(ref, workspacePrefix) {
		w = s.open[ref]
	}
	if w == nil || w.tenant != tenant {
		return nil
	}
	return w
}

// openRow returns the workspace of row, opening it unless it is open;
// from (nil: none) is the state its stored state copies (vfs.Options.From).
func (s *Store) openRow(ctx context.Context, row *meta.Workspace, from *vfs.Durable) (*Workspace, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, fmt.Errorf("open workspace %s: %w", row.Name, fs.ErrClosed)
	}
	if w, ok := s.open[row.ID]; ok {
		return w, nil
	}
	f, err := vfs.Open(ctx, s.deps(), row, vfs.Options{FoldRows: s.opts.FoldRows, Shared: s.opts.Shared, From: from})
	if err != nil {
		return nil, err
	}
	if row.Tenant != scratchTenant {
		f.Watch(s.uncovered.watch(row.ID))
	}
	w := &Workspace{FS: f, store: s, id: row.ID, name: row.Name, tenant: row.Tenant, parent: row.ParentID}
	specs, err := s.loadMounts(ctx, row.ID)
	if err == nil {
		err = w.attachMounts(ctx, specs)
	}
	if err != nil {
		return nil, errors.Join(fmt.Errorf("open workspace %s: %w", row.Name, err), f.Close())
	}
	s.open[row.ID] = w
	s.named[wsName{row.Tenant, row.Name}] = w
	return w, nil
}

// List returns every workspace of the tenant of ctx, ordered by name. It reads the catalog,
// checkpoint counts and each workspace's stored usage record in one
// snapshot, without opening the workspaces (vfs.StoredUsages), so its cost
// grows with the number of workspaces only, not with what they hold.
func (s *Store) List(ctx context.Context) ([]Info, error) {
	var (
		rows   []meta.Workspace
		usages map[string]vfs.Usage
	)
	var counts map[string]int
	err := s.meta.View(ctx, func(tx meta.Tx) error {
		var err error
		if rows, err = tx.Workspaces(); err != nil {
			return err
		}
		tenant := TenantFrom(ctx)
		rows = slices.DeleteFunc(rows, func(w meta.Workspace) bool { return w.Tenant != tenant })
		if counts, err = tx.CheckpointCounts(); err != nil {
			return err
		}
		usages, err = vfs.StoredUsages(ctx, s.deps(), tx, rows)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list workspaces: %w", err)
	}
	out := make([]Info, 0, len(rows))
	for i := range rows {
		out = append(out, newInfo(&rows[i], usages[rows[i].ID], counts[rows[i].ID]))
	}
	return out, nil
}

// Info describes the workspace: identity, lineage, quota, usage.
func (w *Workspace) Info(ctx context.Context) (Info, error) {
	var (
		row       *meta.Workspace
		n         int
		conflicts []meta.Conflict
	)
	err := w.store.meta.View(ctx, func(tx meta.Tx) error {
		var err error
		if row, err = tx.Workspace(w.id); err != nil {
			return err
		}
		counts, err := tx.CheckpointCounts()
		if err != nil {
			return err
		}
		n = counts[w.id]
		conflicts, err = tx.Conflicts(w.id)
		return err
	})
	if err != nil {
		return Info{}, fmt.Errorf("workspace info %s: %w", w.name, err)
	}
	info, err := w.info(ctx, row, n)
	if err != nil {
		return Info{}, err
	}
	info.Conflicts = len(conflicts)
	u, err := w.store.Usage(ctx)
	if err != nil {
		return Info{}, fmt.Errorf("workspace info %s: %w", w.name, err)
	}
	for _, wu := range u.Workspaces {
		if wu.ID == w.id {
			info.ExclusiveBytes, info.SharedBytes = wu.Exclusive.Bytes(), wu.Shared.Bytes()
		}
	}
	return info, nil
}

func (w *Workspace) info(ctx context.Context, row *meta.Workspace, checkpoints int) (Info, error) {
	u, err := w.Usage(ctx)
	if err != nil {
		return Info{}, err
	}
	return newInfo(row, u, checkpoints), nil
}

func newInfo(row *meta.Workspace, u vfs.Usage, checkpoints int) Info {
	return Info{
		ID: row.ID, Name: row.Name, ParentID: row.ParentID, Origin: row.OriginCheckpoint,
		Quota: row.Quota, CreatedAt: row.CreatedAt, UpdatedAt: row.UpdatedAt,
		Entries: u.Entries, Bytes: u.Bytes, Checkpoints: checkpoints,
	}
}

// Delete removes a workspace (by name or ID) with its head and its
// checkpoints. Forks of it are untouched: they hold their own roots. Space
// is reclaimed by garbage collection. Open handles of the workspace fail
// with fs.ErrClosed afterwards. Options.OnDelete then hears of it.
func (s *Store) Delete(ctx context.Context, ref string) error {
	var row *meta.Workspace
	err := s.meta.Update(ctx, func(tx meta.Tx) error {
		var err error
		if row, err = lookup(tx, TenantFrom(ctx), ref); err != nil {
			return err
		}
		return tx.DeleteWorkspace(row.ID)
	})
	if err != nil {
		return fmt.Errorf("delete workspace %s: %w", ref, err)
	}
	err = s.forget(ctx, row.ID)
	if row.Tenant != scratchTenant {
		err = errors.Join(err, s.deleteScratchOf(ctx, row.ID))
	}
	if err != nil {
		return fmt.Errorf("delete workspace %s: deleted, but: %w", ref, err)
	}
	return nil
}

// forget closes and forgets workspace id, deleted (by this process or
// another), and tells Options.OnDelete.
func (s *Store) forget(ctx context.Context, id string) error {
	s.mu.Lock()
	w := s.open[id]
	if w != nil {
		delete(s.open, id)
		delete(s.named, wsName{w.tenant, w.name})
	}
	s.mu.Unlock()
	var err error
	if w != nil {
		err = w.close()
	}
	if s.opts.OnDelete != nil {
		err = errors.Join(err, s.opts.OnDelete(ctx, id))
	}
	return err
}

func toObjects(nodes []kv.Node) []meta.Object {
	out := make([]meta.Object, len(nodes))
	for i, n := range nodes {
		out[i] = meta.Object{Hash: n.Hash, Data: n.Data}
	}
	return out
}
