// Package sqlitemeta is the SQLite driver of meta.Store, the embedded
// default, built on the pure-Go modernc.org/sqlite.
//
// Use:
//
//	s, err := sqlitemeta.Open(ctx, "/var/lib/forkspace/meta.db", sqlitemeta.Options{})
//	...
//	err = s.Update(ctx, func(tx meta.Tx) error { return tx.SetRoot(id, root) })
//	defer s.Close()
//
// Connections: one write connection, owned by a single writer goroutine, a
// pool of query_only read connections for View, and a few more for the
// point reads GetNode/GetInline and the batched GetNodes (kv.BatchSource)
// and GetInlines/GetCheckedInlines (up to 64 objects in one query), which
// use driver-level prepared statements (points.go). Each inline body is
// stored with its CRC-32C, which GetCheckedInlines checks (meta.CheckedInlines,
// docs/decisions/034). The database runs in WAL mode, so readers never
// wait for the writer; pages are read through a memory map.
//
// Group commit: Update calls are queued; the writer takes all that are
// waiting (at most 256) and runs them in one transaction, each fn inside its
// own SAVEPOINT. A failing fn is rolled back to its savepoint and gets its
// own error while the others commit; every caller returns only after the
// shared COMMIT, and if COMMIT fails they all get its error. A lone caller
// does not wait for company; the writer only yields once before closing a
// batch so that callers woken by the previous COMMIT can join. Store.Stats
// reports the mean batch size.
//
// Durability: journal_mode=WAL with synchronous=NORMAL. An Update that
// returned is in the WAL file before COMMIT returns, so it survives kill -9
// of the process (TestCrash checks this). A power loss or kernel crash may
// roll back the last transactions committed before the next WAL checkpoint
// (the file stays consistent); that is the price of not calling fsync on
// every commit. Checkpoints, which do fsync, run on a background goroutine
// (checkpoint.go) rather than inside a COMMIT. Store.Sync (meta.Syncer)
// fsyncs the WAL: every transaction committed before it then survives a
// power loss too (file fsync in vfs, docs/decisions/021).
//
// Writes: puts of many rows use multi-row INSERTs (multirow.go), at most
// seven prepared statements per table.
//
// Schema: numbered migrations embedded from migrations/*.sql, each applied
// in its own transaction and recorded in schema_migrations. Open refuses a
// database whose schema is newer than the code (errors.ErrUnsupported), and
// a file that is not a SQLite database or is truncated (errdefs.ErrCorrupt,
// found from the 100-byte header and the file size, check.go), at a cost
// that does not grow with the database. Damage inside pages is found by
// Store.CheckIntegrity (PRAGMA quick_check, run by fsck) or by the read
// that meets it, never returned as data (docs/decisions/011).
//
// Time: timestamps are integer Unix nanoseconds from the database clock, the
// SQL function forkspace_now_ns(), computed inside the statements that store
// them. For an embedded database that clock is the host's wall clock, made
// strictly increasing within the process; Tx.Now reads it.
//
// Queries: the SQL of every Tx method is shared with the PostgreSQL driver
// (meta/pgmeta) in meta/internal/sqltx; this package brings the
// connections, group commit, the migrations, the clock function
// forkspace_now_ns() and the translation of SQLite's errors.
//
// Errors: a missing row or a missing parent row (foreign key) wraps
// fs.ErrNotExist, a taken workspace name or ID or checkpoint ID wraps
// fs.ErrExist, writes in a View wrap errdefs.ErrReadOnly, a lock another
// process held past Options.BusyTimeout wraps errdefs.ErrBusy, and calls
// after Close wrap fs.ErrClosed; the driver's error stays in the chain.
package sqlitemeta
