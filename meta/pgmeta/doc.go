// Package pgmeta is the PostgreSQL driver of meta.Store, built on pgx
// (github.com/jackc/pgx/v5): a pgxpool connection pool, used through
// database/sql (pgx's stdlib adapter) by the queries it shares with
// meta/sqlitemeta (meta/internal/sqltx), and directly for GetNode and
// GetInline.
//
// Use:
//
//	s, err := pgmeta.Open(ctx, "postgres://forkspace@db.example/forkspace", pgmeta.Options{})
//	...
//	err = s.Update(ctx, func(tx meta.Tx) error { return tx.SetRoot(id, root) })
//	defer s.Close()
//
// Credentials: from the environment only, as libpq takes them (PGPASSWORD,
// PGPASSFILE or ~/.pgpass, PGSSLCERT…). Open refuses a URL holding a
// password (fs.ErrInvalid, saying to use the environment).
//
// Transactions (docs/decisions/018-postgresql-metadata.md): each Update is
// one SERIALIZABLE transaction on a pooled connection. Concurrent Updates
// run side by side, in this process or others; one that fails with a
// serialization failure or deadlock (SQLSTATE 40001, 40P01) is rolled back
// and its fn runs again, as the meta.Store contract allows, up to 50 times
// (then errdefs.ErrBusy). There is no group commit in the driver: the
// server commits concurrent transactions in parallel and flushes their WAL
// together. A View is a REPEATABLE READ, READ ONLY transaction: one
// snapshot, never a serialization failure.
//
// Schema: numbered migrations embedded from migrations/*.sql (the schema of
// sqlitemeta's migrations 0001-0010 in one step, then one file per later
// change), each applied in its own transaction and recorded in
// schema_migrations, all under a session advisory lock, so that processes
// opening one database at once apply each step once. Open refuses a schema
// newer than the code (errors.ErrUnsupported).
//
// Time: timestamps are BIGINT Unix nanoseconds from the database clock,
// forkspace_now_ns() (migration 0001), the server's clock_timestamp() in
// microseconds: every process shares one clock, which never goes back
// unless the server's clock does, but two calls in one microsecond read the
// same value.
//
// Types: BLOBs are BYTEA, booleans BOOLEAN, text sorts bytewise (COLLATE
// "C") as in SQLite; setting values are BYTEA because TEXT cannot hold a
// NUL byte.
//
// Sharing (docs/decisions/023): Options.Exclusive makes one process the
// database's only user, Options.Shared one of many; Listen delivers the
// notifications migration 0003's triggers send when a workspace's head
// generation moves, a workspace is deleted or an audit entry is appended
// (meta.Listener), and Lock takes advisory locks across processes
// (meta.Locker).
//
// Errors: a missing row or parent row wraps fs.ErrNotExist, a taken key
// fs.ErrExist, writes in a View errdefs.ErrReadOnly, repeated serialization
// failures errdefs.ErrBusy, calls after Close fs.ErrClosed; pgx's error
// stays in the chain.
package pgmeta
