package localprovider

import (
	"context"
	"fmt"
	"io"
	"io/fs"
	"strings"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/auth"
	"github.com/forkspace/forkspace/provider"
	"github.com/forkspace/forkspace/vfs"
)

// Workspace is a live workspace of a Provider: the store's workspace with
// the modules its ref records.
type Workspace struct {
	p     *Provider
	w     *forkspace.Workspace
	caps  provider.Capabilities
	shell provider.Shell
}

var (
	_ provider.Workspace = (*Workspace)(nil)
	_ provider.Snapshots = (*Workspace)(nil)
)

// ID implements provider.Workspace: the store's workspace ID.
func (x *Workspace) ID() string { return x.w.ID() }

// Store returns the underlying store workspace.
func (x *Workspace) Store() *forkspace.Workspace { return x.w }

// FS implements provider.Workspace.
func (x *Workspace) FS() provider.FS {
	if !x.caps.FS {
		return nil
	}
	return x.w.FS
}

// Shell implements provider.Workspace.
func (x *Workspace) Shell() provider.Shell {
	if x.shell == nil {
		return nil
	}
	return x.shell
}

// Snapshots implements provider.Workspace.
func (x *Workspace) Snapshots() provider.Snapshots {
	if !x.caps.Snapshot {
		return nil
	}
	return x
}

// Close implements provider.Workspace. The store's workspace stays open
// (the store shares one handle per workspace); a shell module with a
// Close(ctx) or Close() method (sandbox.Shell: its file watches) is closed.
func (x *Workspace) Close(ctx context.Context) error {
	switch c := x.shell.(type) {
	case interface{ Close(context.Context) error }:
		return c.Close(ctx)
	case io.Closer:
		return c.Close()
	}
	return nil
}

// Checkpoint implements provider.Snapshots.
func (x *Workspace) Checkpoint(ctx context.Context, label string) (provider.Checkpoint, error) {
	c, err := x.w.Checkpoint(ctx, label)
	if err != nil {
		return provider.Checkpoint{}, err
	}
	return provider.Checkpoint{ID: c.ID, Label: c.Label, CreatedAt: c.CreatedAt}, nil
}

// Checkpoints implements provider.Snapshots.
func (x *Workspace) Checkpoints(ctx context.Context) ([]provider.Checkpoint, error) {
	cs, err := x.w.Checkpoints(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]provider.Checkpoint, len(cs))
	for i, c := range cs {
		out[i] = provider.Checkpoint{ID: c.ID, Label: c.Label, CreatedAt: c.CreatedAt}
	}
	return out, nil
}

// Restore implements provider.Snapshots.
func (x *Workspace) Restore(ctx context.Context, checkpoint string) error {
	return x.w.Restore(ctx, checkpoint)
}

// state names a state of this workspace for Store.Diff: "" is the live
// head, provider.ParentState the state it was forked from, anything else a
// checkpoint ID or label.
func (x *Workspace) state(ctx context.Context, s string) (string, error) {
	switch s {
	case "":
		return x.w.ID(), nil
	case provider.ParentState:
		return x.parent(ctx)
	}
	return x.w.ID() + "@" + s, nil
}

// parent returns the state the workspace was forked from, if the caller's
// token (auth.FromContext) may read the workspace that state is of;
// otherwise fs.ErrNotExist, as when the parent is gone, without its name.
func (x *Workspace) parent(ctx context.Context) (string, error) {
	s, err := x.p.st.Parent(ctx, x.w.ID())
	if _, ok := auth.FromContext(ctx); !ok || err != nil {
		return s, err
	}
	id, _, _ := strings.Cut(s, "@")
	pw, err := x.p.st.Workspace(ctx, id)
	if err == nil {
		err = auth.Allowed(ctx, auth.Read, forkspace.TenantFrom(ctx), pw.Name())
	}
	if err != nil {
		return "", fmt.Errorf("%s (the state this workspace was forked from): %w", provider.ParentState, fs.ErrNotExist)
	}
	return s, nil
}

// Diff implements provider.Snapshots.
func (x *Workspace) Diff(ctx context.Context, from, to string, unified bool) ([]provider.DiffEntry, error) {
	a, err := x.state(ctx, from)
	if err != nil {
		return nil, err
	}
	b, err := x.state(ctx, to)
	if err != nil {
		return nil, err
	}
	changes, err := x.p.st.Diff(ctx, a, b, vfs.DiffOptions{Unified: unified})
	if err != nil {
		return nil, err
	}
	return diffEntries(changes), nil
}

func diffEntries(changes []vfs.Change) []provider.DiffEntry {
	out := make([]provider.DiffEntry, len(changes))
	for i, c := range changes {
		out[i] = provider.DiffEntry{Op: c.Op.String(), Path: c.Path, OldPath: c.OldPath, Type: c.Type, Link: c.Link, Replaced: c.Replaced, Unified: c.Unified}
	}
	return out
}

// Fork implements provider.Snapshots: a new workspace of the same store,
// with the same modules, whose ref is returned.
func (x *Workspace) Fork(ctx context.Context, name string) (provider.Ref, error) {
	f, err := x.w.Fork(ctx, name, forkspace.ForkOptions{})
	if err != nil {
		return provider.Ref{}, err
	}
	return x.p.ref(f, x.caps)
}

var _ provider.Merger = (*Workspace)(nil)

// mergeState names a state for a merge: ParentState the state this
// workspace was forked from, "@CHECKPOINT" one of its checkpoints, other
// states as they are.
func (x *Workspace) mergeState(ctx context.Context, s string) (string, error) {
	if s == provider.ParentState {
		return x.parent(ctx)
	}
	if cp, ok := strings.CutPrefix(s, "@"); ok {
		return x.w.ID() + "@" + cp, nil
	}
	return s, nil
}

func mergeReport(r forkspace.MergeResult) provider.MergeReport {
	out := provider.MergeReport{From: r.From, Checkpoint: r.Checkpoint, Changed: r.Changed, Conflicts: conflicts(r.Conflicts)}
	if out.Changed == nil {
		out.Changed = []string{}
	}
	return out
}

func conflicts(cs []forkspace.Conflict) []provider.Conflict {
	out := make([]provider.Conflict, len(cs))
	for i, c := range cs {
		out[i] = provider.Conflict{Path: c.Path, Kind: c.Kind, Detail: c.Detail, Resolved: c.Resolved, Next: c.Next}
	}
	return out
}

// Merge implements provider.Merger.
func (x *Workspace) Merge(ctx context.Context, from, policy string) (provider.MergeReport, error) {
	state, err := x.mergeState(ctx, from)
	if err != nil {
		return provider.MergeReport{}, err
	}
	r, err := x.w.Merge(ctx, state, forkspace.MergeOptions{Policy: forkspace.MergePolicy(policy)})
	rep := mergeReport(r)
	rep.From = from
	return rep, err
}

// CherryPick implements provider.Merger. The state must share an ancestor
// with this workspace (a merge base), so that a session reads only its
// own lineage.
func (x *Workspace) CherryPick(ctx context.Context, from string, paths []string, changes bool, policy string) (provider.MergeReport, error) {
	state, err := x.mergeState(ctx, from)
	if err != nil {
		return provider.MergeReport{}, err
	}
	if !strings.HasPrefix(state, x.w.ID()+"@") {
		if _, err := x.p.st.MergeBase(ctx, x.w.ID(), state); err != nil {
			return provider.MergeReport{}, err
		}
	}
	r, err := x.w.CherryPick(ctx, state, paths, forkspace.CherryPickOptions{Changes: changes, Policy: forkspace.MergePolicy(policy)})
	rep := mergeReport(r)
	rep.From = from
	return rep, err
}

// Conflicts implements provider.Merger.
func (x *Workspace) Conflicts(ctx context.Context) ([]provider.Conflict, error) {
	cs, err := x.w.Conflicts(ctx)
	return conflicts(cs), err
}

// Resolve implements provider.Merger.
func (x *Workspace) Resolve(ctx context.Context, path, take string, content []byte) error {
	return x.w.Resolve(ctx, path, forkspace.Resolution{Take: forkspace.Take(take), Content: content})
}
