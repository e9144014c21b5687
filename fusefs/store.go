package fusefs

import (
	"context"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/vfs"
)

// StoreWorkspaces serves the workspaces of a store to MountAll.
type StoreWorkspaces struct{ Store *forkspace.Store }

var _ Workspaces = StoreWorkspaces{}

// Names lists the store's workspaces by name.
func (s StoreWorkspaces) Names(ctx context.Context) ([]string, error) {
	infos, err := s.Store.List(ctx)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(infos))
	for i, in := range infos {
		names[i] = in.Name
	}
	return names, nil
}

// Open returns the live FS of workspace name.
func (s StoreWorkspaces) Open(ctx context.Context, name string) (*vfs.FS, error) {
	w, err := s.Store.Workspace(ctx, name)
	if err != nil {
		return nil, err
	}
	return w.FS, nil
}
