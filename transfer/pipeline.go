package transfer

import (
	"context"
	"errors"
	"io"
	"runtime"
	"sync"

	"github.com/forkspace/forkspace/vfs"
)

// storer is a sink that stores files' bytes ahead of putting them,
// concurrently: store and storeFrom may run on several goroutines at once
// while putStored and put run one at a time, in entry order.
type storer interface {
	sink
	store(ctx context.Context, data []byte) (*vfs.Stored, error)
	// storeFrom stores regular file e's bytes as body yields them.
	storeFrom(ctx context.Context, e *entry, body io.Reader) (*vfs.Stored, error)
	putStored(ctx context.Context, e *entry, s *vfs.Stored) error
	discard(ctx context.Context, s *vfs.Stored)
}

// aheadWindow bounds the entries a pipeline holds between the walk and
// the sink (at most smallFile bytes each).
const aheadWindow = 64

// pipeline puts entries into a storer in walk order while small files are
// hashed and stored by runtime.GOMAXPROCS workers: the walk reads a small
// file whole and queues it; one goroutine puts queued entries in order as
// their bytes are stored. A large file is stored by the walk itself as it
// reads it (streamed, never whole in memory) and queued stored, so the
// workers and the putter go on meanwhile. The first failure cancels the
// rest; stored bytes no entry names are discarded.
type pipeline struct {
	ctx    context.Context
	cancel context.CancelCauseFunc
	dst    storer
	op     string
	jobs   chan *queued // to the store workers
	queue  chan *queued // to the putter, in walk order
	wg     sync.WaitGroup
}

// queued is one entry on its way to the sink: a small file with its bytes
// (stored by a worker, done closed then), a large file stored by the walk
// (st set, data nil), or an entry without a body.
type queued struct {
	e    *entry
	data []byte
	done chan struct{}
	st   *vfs.Stored
	err  error
}

func newPipeline(ctx context.Context, op string, dst storer) *pipeline {
	p := &pipeline{dst: dst, op: op, jobs: make(chan *queued, aheadWindow), queue: make(chan *queued, aheadWindow)}
	p.ctx, p.cancel = context.WithCancelCause(ctx)
	for range runtime.GOMAXPROCS(0) {
		p.wg.Go(func() {
			for q := range p.jobs {
				if p.ctx.Err() == nil {
					q.st, q.err = dst.store(p.ctx, q.data)
				}
				close(q.done)
			}
		})
	}
	p.wg.Go(p.put)
	return p
}

// put is the putter: it puts queued entries in order.
func (p *pipeline) put() {
	for q := range p.queue {
		if q.data != nil {
			<-q.done
		}
		if p.ctx.Err() != nil {
			if q.st != nil {
				p.dst.discard(p.ctx, q.st)
			}
			continue
		}
		err := q.err
		switch {
		case err != nil:
		case q.st != nil:
			err = p.dst.putStored(p.ctx, q.e, q.st)
		default:
			err = p.dst.put(p.ctx, q.e, nil)
		}
		if err != nil {
			p.cancel(errorAt(p.op, q.e.name, err))
		}
	}
}

// addStream stores regular file e's bytes as body yields them, here in
// the walk, and queues it stored.
func (p *pipeline) addStream(e *entry, body io.Reader) error {
	st, err := p.dst.storeFrom(p.ctx, e, body)
	if err != nil {
		return err
	}
	if err := p.send(p.queue, &queued{e: e, st: st}); err != nil {
		p.dst.discard(p.ctx, st)
		return err
	}
	return nil
}

// add queues e, with the bytes of body when e is a small file. body is
// read here, in the walk.
func (p *pipeline) add(e *entry, body io.Reader) error {
	q := &queued{e: e}
	if body != nil {
		q.data = make([]byte, e.size)
		n, err := io.ReadFull(body, q.data)
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
			return err
		}
		q.data, q.done = q.data[:n], make(chan struct{})
		if err := p.send(p.jobs, q); err != nil {
			return err
		}
	}
	return p.send(p.queue, q)
}

func (p *pipeline) send(ch chan *queued, q *queued) error {
	select {
	case ch <- q:
		return nil
	case <-p.ctx.Done():
		return context.Cause(p.ctx)
	}
}

// close stops the pipeline after putting what is queued (unless err, the
// walk's failure, cancels it) and returns the first failure.
func (p *pipeline) close(err error) error {
	defer p.cancel(nil)
	if err != nil {
		p.cancel(err)
	}
	close(p.jobs)
	close(p.queue)
	p.wg.Wait()
	if err != nil {
		return err
	}
	return context.Cause(p.ctx)
}
