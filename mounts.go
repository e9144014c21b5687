package forkspace

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"
	"sync"

	"github.com/forkspace/forkspace/internal/urlcreds"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/mount"
)

// mountRow is one persisted row of a workspace's mount table: what a
// reopen needs to rebuild a mount parsed from a URL (credentials are read
// from the environment again, never stored).
type mountRow struct {
	Root    string        `json:"root"`
	Source  string        `json:"source"`
	Options mount.Options `json:"options"`
}

// mountKey is the setting that holds workspace id's persisted mount table.
func mountKey(id string) string { return "mount.table." + id }

// mountState is a workspace's mount table at run time.
type mountState struct {
	mu    sync.Mutex
	specs []mount.Spec
	mgr   *mount.Manager
}

// MountInfo describes one mount of a workspace (Workspace.Mounts).
type MountInfo struct {
	Root    string        `json:"root"`
	Source  string        `json:"source,omitempty"`
	Options mount.Options `json:"options"`
	// Pending lists paths waiting for write-back.
	Pending []string `json:"pending,omitempty"`
	// Conflicts lists the pending paths whose write-back hit an upstream
	// change (ResolveMount settles them).
	Conflicts []string `json:"conflicts,omitempty"`
}

// persistMounts records the URL-sourced rows of specs for workspace id in
// tx (rows built in code are the host program's to pass again). A source
// carrying credentials is refused (fs.ErrInvalid): they are read from the
// environment, never stored.
func persistMounts(tx meta.Tx, id string, specs []mount.Spec) error {
	var rows []mountRow
	for _, s := range specs {
		if err := urlcreds.Check(s.Source); err != nil {
			return fmt.Errorf("persist mount %s: %w", s.Root, err)
		}
		if s.Source != "" {
			rows = append(rows, mountRow{Root: s.Root, Source: s.Source, Options: s.Options})
		}
	}
	if len(rows) == 0 {
		return nil
	}
	b, err := json.Marshal(rows)
	if err != nil {
		return err
	}
	return tx.SetSetting(mountKey(id), string(b))
}

// loadMounts rebuilds workspace id's persisted URL mounts with the store's
// drivers. A row no driver can rebuild (a program that wires none) is left
// out with a warning: the workspace still opens, and its stubs from that
// mount fail to hydrate.
func (s *Store) loadMounts(ctx context.Context, id string) ([]mount.Spec, error) {
	var raw string
	err := s.meta.View(ctx, func(tx meta.Tx) error {
		var err error
		raw, err = tx.Setting(mountKey(id))
		return err
	})
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var rows []mountRow
	if err := json.Unmarshal([]byte(raw), &rows); err != nil {
		return nil, fmt.Errorf("mount table of %s: %w", id, err)
	}
	specs := make([]mount.Spec, 0, len(rows))
	for _, r := range rows {
		m, _, source, err := mount.ParseURL(r.Source, s.opts.MountDrivers)
		if err != nil {
			s.log.Warn("mount left out", "workspace", id, "root", r.Root, "err", err)
			continue
		}
		specs = append(specs, mount.Spec{Root: r.Root, Mount: m, Options: r.Options, Source: source})
	}
	return specs, nil
}

// attachMounts installs a mount manager for specs on w (replacing any).
func (w *Workspace) attachMounts(ctx context.Context, specs []mount.Spec) error {
	w.mounts.mu.Lock()
	defer w.mounts.mu.Unlock()
	if w.mounts.mgr != nil {
		if err := w.mounts.mgr.Close(); err != nil {
			return err
		}
		w.FS.SetHooks(nil)
		w.mounts.mgr = nil
	}
	w.mounts.specs = specs
	if len(specs) == 0 {
		return nil
	}
	tab, err := mount.NewTable(specs)
	if err != nil {
		return err
	}
	mgr, err := mount.Attach(ctx, mount.Config{
		FS: w.FS, Meta: w.store.meta, Table: tab, Logger: w.store.log,
		OnConflict: w.store.opts.OnMountConflict,
		Context:    mount.Context{SessionID: w.name, WorkspaceID: w.id},
	})
	if err != nil {
		return err
	}
	w.mounts.mgr = mgr
	return nil
}

// Mount replaces the workspace's mount table with its persisted URL mounts
// plus specs (mounts built in code, which are not persisted: a host program
// passes them again after a restart). Roots must not nest (fs.ErrInvalid
// naming both). Pending write-back of the old table stays persisted.
func (w *Workspace) Mount(ctx context.Context, specs ...mount.Spec) error {
	persisted, err := w.store.loadMounts(ctx, w.id)
	if err != nil {
		return fmt.Errorf("mount in %s: %w", w.name, err)
	}
	if err := w.attachMounts(ctx, append(persisted, specs...)); err != nil {
		return fmt.Errorf("mount in %s: %w", w.name, err)
	}
	return nil
}

// manager returns w's mount manager, or nil without mounts.
func (w *Workspace) manager() *mount.Manager {
	w.mounts.mu.Lock()
	defer w.mounts.mu.Unlock()
	return w.mounts.mgr
}

// mountRoots returns the workspace paths of w's mount roots.
func (w *Workspace) mountRoots() []string {
	w.mounts.mu.Lock()
	defer w.mounts.mu.Unlock()
	out := make([]string, len(w.mounts.specs))
	for i, s := range w.mounts.specs {
		out[i] = strings.TrimPrefix(s.Root, "/")
	}
	return out
}

// Mounts describes the workspace's mount table, sorted by root.
func (w *Workspace) Mounts() []MountInfo {
	w.mounts.mu.Lock()
	specs, mgr := slices.Clone(w.mounts.specs), w.mounts.mgr
	w.mounts.mu.Unlock()
	out := make([]MountInfo, 0, len(specs))
	for _, s := range specs {
		o, _ := s.Options.WithDefaults()
		mi := MountInfo{Root: s.Root, Source: s.Source, Options: o}
		if mgr != nil {
			mi.Pending = mgr.Pending(s.Root)
			mi.Conflicts = mgr.Conflicts(s.Root)
		}
		out = append(out, mi)
	}
	slices.SortFunc(out, func(a, b MountInfo) int {
		switch {
		case a.Root < b.Root:
			return -1
		case a.Root > b.Root:
			return 1
		}
		return 0
	})
	return out
}

// MountPolicy tells a command runner which paths are under read-only,
// read-write or ignored mount paths; nil without mounts.
func (w *Workspace) MountPolicy() mount.Policy {
	w.mounts.mu.Lock()
	defer w.mounts.mu.Unlock()
	if len(w.mounts.specs) == 0 {
		return nil
	}
	tab, err := mount.NewTable(w.mounts.specs)
	if err != nil {
		return nil
	}
	return tab
}

// withManager runs fn on w's manager; without mounts a named root is
// fs.ErrNotExist and "" does nothing.
func (w *Workspace) withManager(op, root string, fn func(*mount.Manager) error) error {
	mgr := w.manager()
	if mgr == nil {
		if root != "" {
			return fmt.Errorf("%s mount %s: %w", op, root, fs.ErrNotExist)
		}
		return nil
	}
	return fn(mgr)
}

// Flush writes pending changes under root's read-write mount (every mount
// for "") to their sources now (mount.Manager.Flush).
func (w *Workspace) Flush(ctx context.Context, root string) error {
	return w.withManager("flush", root, func(m *mount.Manager) error { return m.Flush(ctx, root) })
}

// Refresh re-lists root's mount (every mount for "") and applies upstream
// changes (mount.Manager.Refresh).
func (w *Workspace) Refresh(ctx context.Context, root string) error {
	return w.withManager("refresh", root, func(m *mount.Manager) error { return m.Refresh(ctx, root) })
}

// Prefetch hydrates the stubs under root's lazy mount (every mount for "")
// (mount.Manager.Prefetch).
func (w *Workspace) Prefetch(ctx context.Context, root string) error {
	return w.withManager("prefetch", root, func(m *mount.Manager) error { return m.Prefetch(ctx, root) })
}

// ResolveMount settles the write-back conflict at rel under root
// (mount.Manager.Resolve): mount.KeepLocal force-pushes the workspace's
// state, mount.TakeUpstream takes the source's.
func (w *Workspace) ResolveMount(ctx context.Context, root, rel string, r mount.Resolution) error {
	return w.withManager("resolve", root, func(m *mount.Manager) error { return m.Resolve(ctx, root, rel, r) })
}

// settle writes back the debounced changes of w's mounts now
// (mount.Manager.Settle).
func (w *Workspace) settle(ctx context.Context) error {
	return w.withManager("settle", "", func(m *mount.Manager) error { return m.Settle(ctx) })
}

// IndexMounts indexes every mount not indexed yet and returns the errors
// (operations index on first use anyway, logging failures).
func (w *Workspace) IndexMounts(ctx context.Context) error {
	return w.withManager("index", "", func(m *mount.Manager) error { return m.Index(ctx) })
}

// close stops the mount manager and closes the filesystem.
func (w *Workspace) close() error {
	var err error
	if mgr := w.manager(); mgr != nil {
		err = mgr.Close()
	}
	return errors.Join(err, w.FS.Close())
}
