package provider

import "context"

// Merger is the optional part of a Snapshots module that merges states of
// its store into the workspace (localprovider and memprovider have it;
// see forkspace.Workspace.Merge for the semantics). A state is another
// workspace's name ("NAME", "NAME@CHECKPOINT"), "@CHECKPOINT" (a
// checkpoint of this workspace) or ParentState.
type Merger interface {
	// Merge merges state from into the workspace, three-way from their
	// common ancestor. policy: "" records conflicts, "fail" changes
	// nothing when there is one, "ours"/"theirs" settle them.
	Merge(ctx context.Context, from, policy string) (MergeReport, error)
	// CherryPick brings paths of state from: as they are there, or with
	// changes, only the changes from made under them, merged.
	CherryPick(ctx context.Context, from string, paths []string, changes bool, policy string) (MergeReport, error)
	// Conflicts lists the unresolved conflicts.
	Conflicts(ctx context.Context) ([]Conflict, error)
	// Resolve settles the conflict at path: take is "ours", "theirs",
	// "markers" or "content" (with content).
	Resolve(ctx context.Context, path, take string, content []byte) error
}

// MergeReport is the outcome of a merge or cherry-pick.
type MergeReport struct {
	From       string     `json:"from" jsonschema:"the state merged"`
	Checkpoint string     `json:"checkpoint,omitempty" jsonschema:"checkpoint holding the workspace as it was before; restore it to undo"`
	Changed    []string   `json:"changed" jsonschema:"paths the merge changed"`
	Conflicts  []Conflict `json:"conflicts" jsonschema:"paths the merge could not merge"`
}

// Conflict is one path a merge could not merge.
type Conflict struct {
	Path string `json:"path" jsonschema:"the path in this workspace"`
	Kind string `json:"kind" jsonschema:"content, binary, delete/modify, directory/file, add/add, rename/rename, mode, symlink or xattr"`
	// Detail says what each side did.
	Detail string `json:"detail" jsonschema:"what each side did"`
	// Resolved is "ours" or "theirs" when a policy settled it.
	Resolved string `json:"resolved,omitempty" jsonschema:"ours or theirs when the merge policy settled it"`
	Next     string `json:"next" jsonschema:"what to do next"`
}
