// Package gc is forkspace's garbage collector, integrity checker and space
// accountant. It is the only code that deletes tree nodes, inline bodies
// and blobs.
//
// # Reachability
//
// Roots are read in one metadata snapshot (Options.Lock held meanwhile, so
// callers that copy a root from one transaction into another can keep a
// collection from starting between the two): every workspace head, every
// checkpoint, every staging row (of heads and of checkpoints not yet
// folded) and every pending upload intent. Trees are
// walked with kv.Store.Walk, skipping subtrees already marked, so a subtree
// shared by any number of forks and checkpoints is read once; the content
// manifests of tree entries and staging rows (vfs.ContentRefs) name the
// reachable inline bodies and blob chunks. Walk reads a tree a level at a
// time, each level's nodes in batched queries, the next batch read while
// the mark visits the one before. A blob store that lists addresses alone
// (blob.IDLister: fileblob) is listed while the roots are read and marked
// (the listing only proposes candidates, so when it starts does not
// matter), and asked the size and time of the blobs nothing reaches only,
// not of every blob.
//
// # Safety
//
// The snapshot time T0 is the database clock read in a write transaction
// before the snapshot, so every write that the snapshot misses carries
// database timestamps after T0. An object is collected only when it is
// unreachable in the snapshot and older than the grace period:
//   - nodes and inline bodies by touch time (refreshed whenever a writer
//     stores them again), checked in the deleting SQL statement itself;
//   - blobs by their stored time and by their upload intents: writers
//     record an intent before storing or reusing a chunk, and Execute
//     deletes blobs in two phases (condemn; re-check intents and mark
//     deleting; delete), so a writer that starts using a condemned blob
//     reprieves it, and one that meets a blob being deleted waits and
//     stores it again (meta.GCTx).
//
// A crash at any point leaves a state the next run, or Recover (run when a
// store opens), completes.
//
// # Use
//
//	p, err := gc.NewPlan(ctx, deps, gc.Options{Grace: gc.NoGrace})
//	fmt.Println(p.Garbage)           // what would be reclaimed
//	reclaimed, err := p.Execute(ctx) // what was
//
// Usage attributes stored bytes to workspaces (exclusive: what deleting
// the workspace frees; shared: reached by others too). Check verifies that
// every reachable object exists and hashes to its address and lists
// orphans.
//
// Only one Plan may be executed at a time per store, and no other Plan may
// execute between a Plan's creation and its Execute.
package gc
