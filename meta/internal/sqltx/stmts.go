package sqltx

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
)

// StmtSource hands out the statements of one transaction.
type StmtSource interface {
	Stmt(ctx context.Context, query string) (Stmt, error)
}

// Stmt runs one query: a *sql.Stmt, or Query's adapter of a transaction
// whose driver prepares and caches statements itself.
type Stmt interface {
	ExecContext(ctx context.Context, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, args ...any) *sql.Row
}

// Queries is the StmtSource of a transaction whose driver caches prepared
// statements per connection itself (pgx does): each statement runs its
// query text on tx.
func Queries(tx *sql.Tx) StmtSource { return txSource{tx} }

type txSource struct{ tx *sql.Tx }

func (s txSource) Stmt(_ context.Context, query string) (Stmt, error) {
	return txStmt{tx: s.tx, query: query}, nil
}

// txStmt runs its query on a transaction.
type txStmt struct {
	tx    *sql.Tx
	query string
}

func (s txStmt) ExecContext(ctx context.Context, args ...any) (sql.Result, error) {
	return s.tx.ExecContext(ctx, s.query, args...)
}

func (s txStmt) QueryContext(ctx context.Context, args ...any) (*sql.Rows, error) {
	return s.tx.QueryContext(ctx, s.query, args...)
}

func (s txStmt) QueryRowContext(ctx context.Context, args ...any) *sql.Row {
	return s.tx.QueryRowContext(ctx, s.query, args...)
}

// StmtCache prepares each query once on db (a pool or one pinned
// connection) and keeps it until Close. It is a StmtSource.
type StmtCache struct {
	prepare func(ctx context.Context, query string) (*sql.Stmt, error)

	mu    sync.Mutex
	stmts map[string]*sql.Stmt
}

// NewStmtCache returns a cache that prepares statements with prepare
// (sql.DB.PrepareContext or sql.Conn.PrepareContext).
func NewStmtCache(prepare func(ctx context.Context, query string) (*sql.Stmt, error)) *StmtCache {
	return &StmtCache{prepare: prepare, stmts: make(map[string]*sql.Stmt)}
}

// Stmt implements StmtSource.
func (c *StmtCache) Stmt(ctx context.Context, query string) (Stmt, error) {
	return c.prepared(ctx, query)
}

// prepared returns the prepared statement of query.
func (c *StmtCache) prepared(ctx context.Context, query string) (*sql.Stmt, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if st, ok := c.stmts[query]; ok {
		return st, nil
	}
	st, err := c.prepare(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("prepare statement: %w", err)
	}
	c.stmts[query] = st
	return st, nil
}

// Close closes the prepared statements.
func (c *StmtCache) Close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for q, st := range c.stmts {
		st.Close()
		delete(c.stmts, q)
	}
}

// Bind returns the source of c's statements bound to one transaction of
// the pool c prepares on (database/sql re-prepares a statement once per
// connection and keeps it).
func (c *StmtCache) Bind(tx *sql.Tx) StmtSource { return boundTx{tx: tx, cache: c} }

// boundTx binds a pool's cached statements to one transaction.
type boundTx struct {
	tx    *sql.Tx
	cache *StmtCache
}

func (b boundTx) Stmt(ctx context.Context, query string) (Stmt, error) {
	st, err := b.cache.prepared(ctx, query)
	if err != nil {
		return nil, err
	}
	return b.tx.StmtContext(ctx, st), nil
}
