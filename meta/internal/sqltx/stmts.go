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

// Queryer runs query texts: a *sql.Tx, or a *sql.Conn in a transaction
// its owner began with a statement of its own.
type Queryer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
	QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error)
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// Queries is the StmtSource of a transaction whose driver caches prepared
// statements per connection itself (pgx does): each statement runs its
// query text on q.
func Queries(q Queryer) StmtSource { return txSource{q} }

type txSource struct{ q Queryer }

func (s txSource) Stmt(_ context.Context, query string) (Stmt, error) {
	return txStmt{q: s.q, query: query}, nil
}

// txStmt runs its query on a transaction.
type txStmt struct {
	q     Queryer
	query string
}

func (s txStmt) ExecContext(ctx context.Context, args ...any) (sql.Result, error) {
	return s.q.ExecContext(ctx, s.query, args...)
}

func (s txStmt) QueryContext(ctx context.Context, args ...any) (*sql.Rows, error) {
	return s.q.QueryContext(ctx, s.query, args...)
}

func (s txStmt) QueryRowContext(ctx context.Context, args ...any) *sql.Row {
	return s.q.QueryRowContext(ctx, s.query, args...)
}

// StmtCache prepares each query once on db (a pool or one pinned
// connection) and keeps it until Close. It is a StmtSource.
type StmtCache struct {
	prepare func(ctx context.Context, query string) (*sql.Stmt, error)

	mu      sync.Mutex
	stmts   map[string]*sql.Stmt
	warming map[string]bool // queries being prepared in the background
	warmers sync.WaitGroup  // their goroutines
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
// The lock is not held while preparing, which may wait for a connection.
func (c *StmtCache) prepared(ctx context.Context, query string) (*sql.Stmt, error) {
	if st, ok := c.cached(query); ok {
		return st, nil
	}
	st, err := c.prepare(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("prepare statement: %w", err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if had, ok := c.stmts[query]; ok { // prepared meanwhile by another caller
		st.Close()
		return had, nil
	}
	c.stmts[query] = st
	return st, nil
}

// Close waits for statements being prepared in the background and closes
// the prepared statements. Call it before closing the pool.
func (c *StmtCache) Close() {
	c.warmers.Wait()
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

// Stmt implements StmtSource. A query the cache lacks is prepared on the
// transaction's own connection for this use, and on the pool in the
// background for later ones: preparing on the pool here would wait for a
// second connection while holding one, and transactions holding every
// connection of the pool, each waiting so, never finish.
func (b boundTx) Stmt(ctx context.Context, query string) (Stmt, error) {
	if st, ok := b.cache.cached(query); ok {
		return b.tx.StmtContext(ctx, st), nil
	}
	st, err := b.tx.PrepareContext(ctx, query)
	if err != nil {
		return nil, fmt.Errorf("prepare statement: %w", err)
	}
	b.cache.warm(query)
	return st, nil
}

// cached returns the statement of query if it is prepared.
func (c *StmtCache) cached(query string) (*sql.Stmt, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	st, ok := c.stmts[query]
	return st, ok
}

// warm prepares query in the background, once.
func (c *StmtCache) warm(query string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.warming == nil {
		c.warming = make(map[string]bool)
	}
	if c.warming[query] {
		return
	}
	c.warming[query] = true
	c.warmers.Go(func() {
		_, _ = c.prepared(context.Background(), query) // a failure leaves the next use to try again
		c.mu.Lock()
		delete(c.warming, query)
		c.mu.Unlock()
	})
}
