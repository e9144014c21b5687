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
	found := false
	err = p.rows(ctx, query, []driver.NamedValue{{Ordinal: 1, Value: arg}}, 1, func(row []driver.Value) error {
		b, ok := row[0].([]byte)
		if !ok && row[0] != nil {
			return fmt.Errorf("point read: got %T, want bytes", row[0])
		}
		data, found = b, true
		return io.EOF // one row is all there is
	})
	if err == nil && !found {
		err = sql.ErrNoRows
	}
	return data, err
}

// batchArgs is how many arguments getMany's queries take.
const batchArgs = 64

// getMany runs query, which selects a BLOB key, a BLOB and an INTEGER or
// NULL for each of batchArgs BLOB arguments (an IN list), with keys (at
// most batchArgs; fewer are padded by repeating the last) and calls fn for
// each row: num is the third column, stored false when it is NULL.
func (p *pointReader) getMany(ctx context.Context, query string, keys [][]byte, fn func(key, data []byte, num int64, stored bool) error) error {
	if len(keys) == 0 {
		return nil
	}
	if len(keys) > batchArgs {
		return fmt.Errorf("batched read of %d keys: at most %d", len(keys), batchArgs)
	}
	args := make([]driver.NamedValue, batchArgs)
	for i := range args {
		args[i] = driver.NamedValue{Ordinal: i + 1, Value: keys[min(i, len(keys)-1)]}
	}
	return p.rows(ctx, query, args, 3, func(row []driver.Value) error {
		k, ok1 := row[0].([]byte)
		d, ok2 := row[1].([]byte)
		num, ok3 := row[2].(int64)
		if !ok1 || !ok2 && row[1] != nil || !ok3 && row[2] != nil {
			return fmt.Errorf("batched read: got %T, %T, %T, want bytes, bytes, integer", row[0], row[1], row[2])
		}
		return fn(k, d, num, ok3)
	})
}

// rows runs query, prepared once per connection, and calls fn with each
// row of its cols columns; io.EOF from fn stops early without error.
func (p *pointReader) rows(ctx context.Context, query string, args []driver.NamedValue, cols int, fn func([]driver.Value) error) error {
	var pc *pointConn
	select {
	case pc = <-p.free:
	case <-ctx.Done():
		return ctx.Err()
	}
	defer func() { p.free <- pc }()
	return pc.conn.Raw(func(dc any) error {
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
		rows, err := q.QueryContext(ctx, args)
		if err != nil {
			return err
		}
		defer rows.Close()
		dest := make([]driver.Value, cols)
		for {
			if err := rows.Next(dest); err == io.EOF {
				return nil
			} else if err != nil {
				return err
			}
			if err := fn(dest); err == io.EOF {
				return nil
			} else if err != nil {
				return err
			}
		}
	})
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
