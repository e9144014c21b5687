// Package forkspace is the Go library of forkspace: durable, forkable
// workspaces for AI agents.
//
// Open a store (an SQLite database and a blob directory under
// $FORKSPACE_HOME or ./.forkspace by default), create workspaces, and work
// in them through the file operations of the embedded *vfs.FS, which also
// implements io/fs. Fork and Checkpoint record a tree root and cost the same
// for a workspace of ten files or a hundred thousand; Restore points the head
// back at a checkpoint; Diff compares any two states in time proportional to
// the change. A checkpoint is named by its ID or by its label; labels may
// repeat, and a label names the newest checkpoint carrying it, so restoring
// or diffing by label always works (older ones remain reachable by ID).
//
// Merge brings one state into a workspace three-way from their common
// ancestor (every fork records the state it started from; MergeBase finds
// it for a fork and its parent, siblings, or any two descendants of a
// common state): changes on one side apply, text files changed on both
// sides merge line by line (package merge), and the rest are conflicts,
// recorded as data (Conflicts, Resolve) or settled by a policy. CherryPick
// and RestorePaths bring chosen paths of any state into a workspace.
//
// Best-of-N is three calls: Workspace.ForkN forks one state N ways in one
// transaction, Store.Compare diffs N states pairwise (a change-count
// matrix and each pair's diff), and Store.Promote merges the chosen fork
// into its parent (or makes it the parent's head) and deletes the other
// forks of the same ForkN.
//
//	st, err := forkspace.Open(ctx, forkspace.Options{})
//	ws, err := st.Create(ctx, "agent-1", forkspace.CreateOptions{})
//	err = ws.WriteFile(ctx, "notes.md", []byte("hello"), 0o644)
//	cp, err := ws.Checkpoint(ctx, "before refactor")
//	fork, err := ws.Fork(ctx, "agent-1-try", forkspace.ForkOptions{})
//	changes, err := st.Diff(ctx, "agent-1", "agent-1-try", vfs.DiffOptions{})
//
// Errors are io/fs sentinels or those of package errdefs, wrapped so that
// errors.Is finds them; path operations return *fs.PathError.
//
// Layers, bottom up (docs/architecture.md): cas (content addresses), chunk
// (FastCDC), blob (chunk storage), meta (SQL metadata), kv (versioned
// copy-on-write trees with a staging delta), content (file bytes), vfs
// (POSIX semantics over one tree), and this package (the workspace catalog).
package forkspace
