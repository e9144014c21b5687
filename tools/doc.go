// Package tools is the model-facing tool set of forkspace: read, write,
// edit, ls, glob, grep, stat, rm, mkdir, mv, exec (and exec_status,
// exec_wait, exec_tail, exec_output, exec_kill for background runs),
// checkpoint, checkpoints, restore, diff and fork, merge, conflicts, resolve
// and cherry_pick, compare and promote, and with Options.Feed watch (wait
// for changes under a path, from any door, with a since that continues
// without a gap), each with a JSON schema an LLM can call from (derived
// from the Go input struct and its jsonschema tags). merge and cherry_pick
// need a provider.Merger (localprovider); each conflict they report names
// its path, kind and next step, and while a workspace has unresolved
// conflicts every other tool's result ends with a note saying so.
// Best-of-N: fork with n forks n ways at once, compare diffs states
// pairwise, promote keeps one fork (merged in, or as the workspace's
// state) and deletes the others; they need a provider.Brancher.
// In a fork, diff from "@parent" (provider.ParentState) compares with the
// state the fork was made from. A tool whose result has a structure (diff:
// the ordered changes) also
// returns it as Result.Structured, described by Tool.OutputSchema.
//
// Invariants:
//   - Paths are workspace-relative: "src/a.go" and "/src/a.go" name the
//     same file ("/" is the workspace root, never the host's). A path that
//     climbs out with ".." is a tool error. Host paths of a provider never
//     appear in arguments or results.
//   - Results are sized for a context window: reads are paged by lines and
//     capped in bytes with a continuation hint, listings and searches are
//     paginated or capped, binary files are described instead of dumped.
//   - Every failure is a Result with IsError set and a message the model
//     can act on ("no such file or directory: calc; did you mean
//     calc.py?"); Call never returns a Go error and never panics. Errors
//     are rendered in one place (describe): paths in messages are cut to
//     200 bytes, and no message names a host path or a store internal (a
//     database error text, an audit-recording failure's wrapping); store
//     conditions such as a full disk are named by their kind.
//   - Mutating tools are recorded through package audit when
//     Options.Recorder is set, optionally after an automatic checkpoint
//     (Options.AutoCheckpoint), so any step can be rewound. The read-only
//     profile (Options.ReadOnly) does not expose them at all.
//
// exec can report progress while the command runs (WithProgress, every
// Options.ProgressInterval) and can run in the background (background:
// true): it returns a run id, and exec_status, exec_wait, exec_tail,
// exec_output and exec_kill follow the run from the workspace that
// started it. A Set keeps at most MaxRuns runs, finished ones for
// KeepRuns, each with its output spooled to an unlinked temporary file
// (the first MaxRunOutput bytes, and the last MaxRunTail in memory). A
// server kills the runs of a session that ended with EndRuns.
//
// Tools act on a Target: a provider.Workspace used directly (Direct) or a
// session's workspace behind a provider.Manager (Session), which opens it
// lazily and re-resolves it after an eviction. A Set is safe for concurrent
// use; concurrent edits of one file are serialized.
//
//	set := tools.New(tools.Options{AutoCheckpoint: true})
//	res := set.Call(ctx, tools.Direct(ws), "read", json.RawMessage(`{"path":"README.md"}`))
package tools
