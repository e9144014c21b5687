// Package storecopy moves a whole store — every metadata row the meta.Tx
// contract exposes and every blob — from one pair of drivers to another
// (SQLite and a local directory to PostgreSQL and S3, and back), and
// verifies the copy: each node, inline body and blob is read back from
// the destination and hashed, and the metadata is read back and compared
// table by table (row counts and a BLAKE3 digest).
//
// The destination must be empty. A copy marks it (setting copy_source)
// before it writes anything else and writes the catalog — settings,
// workspaces, checkpoints, staging, history, audit log, tokens — in one
// final transaction, so an interrupted copy leaves a destination that a
// rerun from the same source completes, and that anything else refuses.
// What a copy does not move: garbage collection's bookkeeping (upload
// intents, condemned blobs), which describes work in progress on the
// source, and the numbers that only order a store's own changes: the
// staging log's versions and the workspaces' head generations (decision
// 023), which the destination starts afresh.
//
// docs/decisions/024-store-copy.md records the design.
//
// Salvage (Options.Salvage) copies out of a damaged source what can still
// be read, walking each workspace state's tree instead of scanning the
// node table, and reports what is lost.
package storecopy
