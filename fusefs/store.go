package fusefs

import (
	"context"
	"slices"
	"strings"

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

// Open returns the live FS of workspace name and its checkpoints.
func (s StoreWorkspaces) Open(ctx context.Context, name string) (*vfs.FS, Checkpoints, error) {
	w, err := s.Store.Workspace(ctx, name)
	if err != nil {
		return nil, nil, err
	}
	return w.FS, WorkspaceCheckpoints{w}, nil
}

// WorkspaceCheckpoints serves the checkpoints of a workspace.
type WorkspaceCheckpoints struct{ W *forkspace.Workspace }

var _ Checkpoints = WorkspaceCheckpoints{}

// Names lists each label once and the IDs of checkpoints without a label
// that can name a directory.
func (c WorkspaceCheckpoints) Names(ctx context.Context) ([]string, error) {
	cps, err := c.W.Checkpoints(ctx)
	if err != nil {
		return nil, err
	}
	seen := map[string]bool{}
	var out []string
	for _, cp := range cps {
		name := cp.Label
		if name == "" || name == "." || name == ".." || len(name) > vfs.MaxNameLen || strings.Contains(name, "/") {
			name = cp.ID
		}
		if !seen[name] {
			seen[name] = true
			out = append(out, name)
		}
	}
	slices.Sort(out)
	return out, nil
}

// At returns the state of checkpoint name (a label or an ID).
func (c WorkspaceCheckpoints) At(ctx context.Context, name string) (*vfs.FS, error) {
	return c.W.At(ctx, name)
}
