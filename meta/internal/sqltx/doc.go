// Package sqltx is the query layer the SQL drivers of meta.Store share:
// Tx implements meta.Tx over database/sql prepared statements, one file per
// concept (settings.go, counters.go, objects.go, workspaces.go, …).
//
// The SQL is written once for SQLite and PostgreSQL: $n parameters,
// INSERT … ON CONFLICT, RETURNING, CAST to BIGINT where PostgreSQL could not
// infer a parameter's type, and the database clock forkspace_now_ns()
// (NowFunc), which each driver defines. A driver brings the connections,
// the transactions (begin, commit, retry), the schema, and translate, which
// maps its errors to the forkspace sentinels.
//
// Use (inside a driver's View or Update):
//
//	t := sqltx.New(ctx, cache.Bind(sqlTx), translate, readOnly)
//	defer t.Finish()
//	return fn(t)
package sqltx
