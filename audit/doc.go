// Package audit records every mutating call made to a workspace — through
// the model-facing tools, MCP, sandboxed exec or an audited library handle —
// in the store's metadata database (meta.AuditTx), and reads the log back.
//
// An entry holds who (actor and session, from the context: WithActor),
// what (the tool name and a BLAKE3 digest of the canonical JSON of its
// arguments, never the arguments themselves, so file contents never enter
// the log), the outcome (ok or the error text), the duration, the paths
// changed, and the checkpoint taken automatically before the call, if any.
//
// Callers wrap each mutation in Run:
//
//	err := audit.Run(ctx, log, audit.Call{
//		WorkspaceID: ws.ID(), Tool: "write", Args: args,
//		Checkpoint: ws.AutoCheckpoint, // optional: rewind point before the call
//	}, func(ctx context.Context) ([]string, error) {
//		return []string{args.Path}, ws.WriteFile(ctx, args.Path, data, 0o644)
//	})
//
// A call whose last act is one vfs operation committing one mutation
// (a write, a mkdir, a Batch) can have its entry and history state
// committed in that mutation's transaction instead of a second one:
// its function gives that operation a context carrying Commit's work
// (vfs.WithCommit; httpapi's writes do). Run records the entry itself
// when the operation fails or commits nothing.
//
// Run marks its call's context (Cover), so the store's recorder of
// uncovered changes — everything vfs.FS.Watch reports that no audited
// call covers, such as FUSE writes (WithSurface names the door) — does
// not record its changes twice. Every entry Log records is handed to its
// listeners (OnRecord: the change feed, package feed); Forward reads the
// log oldest first after a Seq, Prune drops its old prefix.
//
// Invariants: entries are append-only (but for a pruned prefix) and
// ordered by Seq, which follows commit order; a call is recorded
// whether it succeeds or fails; recording uses a context that is not
// cancelled with the caller's, so a cancelled call is still logged.
// Concurrency: Log is safe for concurrent use.
package audit
