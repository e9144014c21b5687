// Package meta is the contract of forkspace's metadata database.
//
// A store keeps, in one SQL database: the workspace catalog (name, head
// tree root, fork parent, quota), checkpoints (immutable roots), staging
// rows (each workspace's recent mutations, not yet folded into its tree),
// immutable tree nodes and inline file bodies (both content-addressed),
// counters (store-wide inode numbers), settings (format version,
// chunker parameters, tree seed) and the append-only audit log of
// mutating calls (AuditTx).
//
// Drivers: sqlitemeta (embedded default). The contract uses no SQL dialect,
// so a PostgreSQL driver implements it unchanged. metatest is the
// conformance suite every driver passes.
package meta
