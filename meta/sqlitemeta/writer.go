package sqlitemeta

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"sync/atomic"

	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/meta/internal/sqltx"
)

// maxBatch bounds how many Update calls share one database transaction.
const maxBatch = 256

// request is one queued Update call.
type request struct {
	ctx  context.Context
	fn   func(meta.Tx) error
	done chan outcome // buffered: the writer never blocks on a caller
}

// outcome is what the writer reports back for one request.
type outcome struct {
	err error
	// panicked is set when fn panicked; the caller re-panics with
	// panicValue in its own goroutine.
	panicked   bool
	panicValue any
}

// writer owns the single write connection. It takes every request waiting
// in the queue (up to maxBatch) and runs them in one transaction, each fn
// inside its own savepoint, then commits once (group commit). A lone request
// runs without a savepoint. Nothing waits for a batch to fill: a request
// that arrives while a batch commits is in the next one.
type writer struct {
	conn    *sql.Conn
	ck      *checkpointer
	log     *slog.Logger
	stmts   *sqltx.StmtCache
	queue   chan *request
	stopped chan struct{}

	// commits and updates count transactions committed and the Update
	// functions they carried (see Store.Stats).
	commits, updates atomic.Int64
}

func newWriter(conn *sql.Conn, ck *checkpointer, log *slog.Logger) *writer {
	return &writer{
		conn:    conn,
		ck:      ck,
		log:     log,
		stmts:   sqltx.NewStmtCache(conn.PrepareContext),
		queue:   make(chan *request, maxBatch),
		stopped: make(chan struct{}),
	}
}

// run serves the queue until it is closed and drained.
func (w *writer) run() {
	defer close(w.stopped)
	batch := make([]*request, 0, maxBatch)
	outs := make([]outcome, 0, maxBatch)
	for req := range w.queue {
		batch = append(batch[:0], req)
		// Let callers woken by the previous commit enqueue before the
		// batch is closed: a yield, not a wait (it returns at once when
		// nothing else is runnable).
		runtime.Gosched()
	fill:
		for len(batch) < maxBatch {
			select {
			case r, ok := <-w.queue:
				if !ok {
					break fill
				}
				batch = append(batch, r)
			default:
				break fill
			}
		}
		outs = w.commit(batch, outs[:0])
		for i, r := range batch {
			r.done <- outs[i]
			batch[i] = nil
		}
	}
}

// commit runs one batch and returns each request's outcome.
func (w *writer) commit(batch []*request, outs []outcome) []outcome {
	ctx := context.Background() // a caller's cancellation must not abort the others
	if err := w.execRaw(ctx, "BEGIN IMMEDIATE"); err != nil {
		return failAll(batch, outs, fmt.Errorf("begin transaction: %w", err))
	}
	lone := len(batch) == 1
	committed := 0
	for _, r := range batch {
		o, err := w.runOne(r, lone)
		outs = append(outs, o)
		if err != nil {
			w.rollback()
			return failAll(batch, outs, err)
		}
		if o.err == nil {
			committed++
		}
	}
	if committed == 0 {
		w.rollback()
		return outs
	}
	if err := w.execRaw(ctx, "COMMIT"); err != nil {
		w.rollback()
		err = fmt.Errorf("commit transaction: %w", err)
		for i := range outs {
			if outs[i].err == nil {
				outs[i].err = err
			}
		}
		return outs
	}
	w.commits.Add(1)
	w.updates.Add(int64(committed))
	w.ck.committed()
	return outs
}

// runOne runs one fn. Its failure (error or panic) is rolled back to its
// savepoint and reported in the outcome; the returned error means the whole
// transaction is lost (a savepoint could not be set or undone), and the
// outcome only matters if fn panicked.
func (w *writer) runOne(r *request, lone bool) (outcome, error) {
	if err := r.ctx.Err(); err != nil {
		return outcome{err: fmt.Errorf("update: %w", err)}, nil
	}
	if !lone {
		if err := w.execRaw(context.Background(), "SAVEPOINT fn"); err != nil {
			return outcome{}, fmt.Errorf("set savepoint: %w", err)
		}
	}
	o := w.call(r)
	if lone {
		return o, nil
	}
	ctx := context.Background()
	if o.err != nil {
		if err := w.execRaw(ctx, "ROLLBACK TO SAVEPOINT fn"); err != nil {
			return o, fmt.Errorf("roll back to savepoint: %w (after %w)", err, o.err)
		}
	}
	if err := w.execRaw(ctx, "RELEASE SAVEPOINT fn"); err != nil {
		return o, fmt.Errorf("release savepoint: %w", err)
	}
	return o, nil
}

// call runs fn, turning a panic into an outcome (with a non-nil err).
func (w *writer) call(r *request) (o outcome) {
	defer func() {
		if v := recover(); v != nil {
			o = outcome{err: errFnPanicked, panicked: true, panicValue: v}
		}
	}()
	// Statements run without the caller's cancellation: SQLite answers an
	// interrupted write by rolling back the whole transaction, which would
	// take the other requests of the batch with it.
	t := sqltx.New(context.WithoutCancel(r.ctx), w.stmts, translate, false)
	defer t.Finish()
	return outcome{err: r.fn(t)}
}

// errFnPanicked stands in for the error of a fn that panicked.
var errFnPanicked = errors.New("update function panicked")

// execRaw runs a transaction-control statement.
func (w *writer) execRaw(ctx context.Context, query string) error {
	_, err := w.conn.ExecContext(ctx, query)
	return translate(err)
}

// rollback abandons the open transaction. The callers already get the error
// that caused it, so a failed rollback is only logged.
func (w *writer) rollback() {
	if _, err := w.conn.ExecContext(context.Background(), "ROLLBACK"); err != nil {
		w.log.Warn("roll back transaction", "err", err)
	}
}

// failAll gives every request of the batch err, except those whose fn
// panicked among the outcomes so far: they still re-panic.
func failAll(batch []*request, outs []outcome, err error) []outcome {
	for i := range batch {
		if i == len(outs) {
			outs = append(outs, outcome{})
		}
		if !outs[i].panicked {
			outs[i] = outcome{err: err}
		}
	}
	return outs
}
