package sqlitemeta

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"
)

// pointReader serves GetNode and GetInline, the hottest reads, on a few
// dedicated read connections with statements prepared at the driver level.
// This skips database/sql's per-query bookkeeping and its second copy of
// the bytes (the driver already returns a fresh slice): about a third of a
// point read's cost.
type pointReader struct {
	free chan *pointConn
	n    int // connections opened
}

// pointConn is one connection and its prepared statements, by query. Both
// are used only inside sql.Conn.Raw, which holds the connection's lock.
type pointConn struct {
	conn  *sql.Conn
	stmts map[string]driver.Stmt
}

func newPointReader(ctx context.Context, db *sql.DB, conns int) (*pointReader, error) {
	p := &pointReader{free: make(chan *pointConn, conns)}
	for range conns {
		c, err := db.Conn(ctx)
		if err != nil {
			return nil, errors.Join(err, p.close())
		}
		p.free <- &pointConn{conn: c, stmts: map[string]driver.Stmt{}}
		p.n++
	}
	return p, nil
}

// get runs query, which selects one BLOB by one BLOB argument; no row is
// sql.ErrNoRows.
func (p *pointReader) get(ctx context.Context, query string, arg []byte) (data []byte, err error) {
	var pc *pointConn
	select {
	case pc = <-p.free:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { p.free <- pc }()
	err = pc.conn.Raw(func(dc any) error {
		st, ok := pc.stmts[query]
		if !ok {
			prep, ok := dc.(driver.ConnPrepareContext)
			if !ok {
				return fmt.Errorf("prepare point read: %T cannot prepare with a context", dc)
			}
			var err error
			if st, err = prep.PrepareContext(ctx, query); err != nil {
				return err
			}
			pc.stmts[query] = st
		}
		q, ok := st.(driver.StmtQueryContext)
		if !ok {
			return fmt.Errorf("point read: %T cannot query with a context", st)
		}
		rows, err := q.QueryContext(ctx, []driver.NamedValue{{Ordinal: 1, Value: arg}})
		if err != nil {
			return err
		}
		defer rows.Close()
		dest := []driver.Value{nil}
		if err := rows.Next(dest); err != nil {
			if err == io.EOF {
				return sql.ErrNoRows
			}
			return err
		}
		b, ok := dest[0].([]byte)
		if !ok && dest[0] != nil {
			return fmt.Errorf("point read: got %T, want bytes", dest[0])
		}
		data = b
		return nil
	})
	return data, err
}

// close waits for reads in flight and closes every connection.
func (p *pointReader) close() error {
	var errs []error
	for range p.n {
		pc := <-p.free
		errs = append(errs, pc.conn.Raw(func(any) error {
			var errs []error
			for _, st := range pc.stmts {
				errs = append(errs, st.Close())
			}
			return errors.Join(errs...)
		}), pc.conn.Close())
	}
	return errors.Join(errs...)
}
