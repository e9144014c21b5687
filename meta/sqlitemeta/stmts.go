package sqlitemeta

import (
	"context"
	"database/sql"
	"fmt"
	"sync"
)

// stmtSource hands out prepared statements for a transaction.
type stmtSource interface {
	stmt(ctx context.Context, query string) (*sql.Stmt, error)
}

// stmtCache prepares each query once on db (a pool or one pinned
// connection) and keeps it until close.
type stmtCache struct {
	prepare func(ctx context.Context, query string) (*sql.Stmt, error)

	mu    sync.Mutex
	stmts map[string]*sql.Stmt
}

func newStmtCache(prepare func(ctx context.Context, query string) (*sql.Stmt, error)) *stmtCache {
	return &stmtCache{prepare: prepare, stmts: make(map[string]*sql.Stmt)}
}

func (c *stmtCache) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
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

func (c *stmtCache) close() {
	c.mu.Lock()
	defer c.mu.Unlock()
	for q, st := range c.stmts {
		st.Close()
		delete(c.stmts, q)
	}
}

// readTx binds the read pool's cached statements to one read transaction.
type readTx struct {
	tx    *sql.Tx
	cache *stmtCache
}

func (r readTx) stmt(ctx context.Context, query string) (*sql.Stmt, error) {
	st, err := r.cache.stmt(ctx, query)
	if err != nil {
		return nil, err
	}
	return r.tx.StmtContext(ctx, st), nil
}
