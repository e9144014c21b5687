package forkspace

import (
	"context"
	"errors"
	"fmt"
	"io/fs"

	"github.com/forkspace/forkspace/meta"
)

// scratchTenant holds the scratch forks. Names starting with "ws-" are
// reserved for IDs, so no user's or token's tenant can be it.
const scratchTenant = workspacePrefix + "scratch"

// ScratchFork forks the workspace's live state (in constant time, as Fork)
// into a hidden workspace named name, for a copy a program changes and
// then brings back or throws away (exec on a FUSE mount: package
// sandbox). It is in no tenant's listing, no token can reach it, its
// changes are neither audited nor in the change feed, and it has no
// mounts. Names are unique among the scratch forks of the store: a
// caller that records the name before calling can delete the fork after a
// crash whether or not it was made. quota is its quota (zero: the
// workspace's). Delete it with DeleteScratch; ScratchForks lists them.
func (w *Workspace) ScratchFork(ctx context.Context, name string, quota meta.Quota) (*Workspace, error) {
	return w.Fork(ctx, name, ForkOptions{Quota: quota, scratch: true})
}

// ScratchForks returns the IDs of the workspace's scratch forks.
func (w *Workspace) ScratchForks(ctx context.Context) ([]string, error) {
	ids, err := w.store.scratchForks(ctx, w.id)
	if err != nil {
		return nil, fmt.Errorf("scratch forks of %s: %w", w.name, err)
	}
	return ids, nil
}

// scratchForks returns the IDs of workspace id's scratch forks.
func (s *Store) scratchForks(ctx context.Context, id string) ([]string, error) {
	var ids []string
	err := s.meta.View(ctx, func(tx meta.Tx) error {
		rows, err := tx.Workspaces()
		for _, r := range rows {
			if r.Tenant == scratchTenant && r.ParentID == id {
				ids = append(ids, r.ID)
			}
		}
		return err
	})
	return ids, err
}

// deleteScratchOf deletes the scratch forks of deleted workspace id.
func (s *Store) deleteScratchOf(ctx context.Context, id string) error {
	ids, err := s.scratchForks(ctx, id)
	for _, sid := range ids {
		err = errors.Join(err, s.Delete(WithTenant(ctx, scratchTenant), sid))
	}
	return err
}

// DeleteScratch deletes the workspace's scratch fork ref (its name or
// ID), as Store.Delete deletes a workspace; a ref that is not one of its
// scratch forks is fs.ErrNotExist.
func (w *Workspace) DeleteScratch(ctx context.Context, ref string) error {
	var id string
	err := w.store.meta.View(ctx, func(tx meta.Tx) error {
		r, err := lookup(tx, scratchTenant, ref)
		if err == nil && (r.Tenant != scratchTenant || r.ParentID != w.id) {
			err = fmt.Errorf("%q is not a scratch fork of %s: %w", ref, w.name, fs.ErrNotExist)
		}
		if err == nil {
			id = r.ID
		}
		return err
	})
	if err != nil {
		return fmt.Errorf("delete scratch fork: %w", err)
	}
	return w.store.Delete(WithTenant(ctx, scratchTenant), id)
}
