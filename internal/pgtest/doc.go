// Package pgtest runs a throwaway PostgreSQL server for tests: one server
// per test binary, started by Main (or Run) from TestMain, and a fresh database per
// test from DB.
//
// The server is the Debian package's (postgresql: initdb and postgres under
// /usr/lib/postgresql/VERSION/bin, or $PG_BIN, or PATH). Its cluster lives
// in a temporary directory with fsync off and listens only on a unix socket
// in that directory, so tests never collide on a port and nothing outside
// the directory is touched. PostgreSQL refuses to run as root: as root the
// server runs as the postgres user the Debian package creates. Missing, the
// tests fail under CI (CI=true) and are skipped elsewhere.
//
// Own starts a server for one test alone, for tests that crash it:
// Server.Restart kills it with SIGQUIT (an immediate shutdown) and starts
// it again on the same cluster and socket. Its commits wait for their WAL
// (synchronous_commit=on; the shared server does not wait), so what it
// acknowledged survives the restart.
//
// Use:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
//	func TestX(t *testing.T) {
//		url := pgtest.DB(t) // postgres:///t3?host=/tmp/pg…&user=forkspace
//		…
//	}
package pgtest
