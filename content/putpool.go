package content

import (
	"context"
	"fmt"
	"sync"

	"github.com/forkspace/forkspace/cas"
)

// putWorkers is how many goroutines hash and put new chunks during a
// commit, while the committing goroutine finds chunk boundaries.
const putWorkers = 2

// putPool hashes new chunks and puts them to the blob store on
// putWorkers goroutines, taking an upload intent on each before its put.
// The first failure cancels the pool's context: queued chunks are
// skipped, and add and wait report the failure.
type putPool struct {
	s      *Store
	ctx    context.Context
	cancel context.CancelCauseFunc
	jobs   chan putJob
	wg     sync.WaitGroup
	is     *intentSet
}

// putJob is one chunk to store. hash receives its address; done, when
// set, is called once data is no longer used, stored or not.
type putJob struct {
	data []byte
	hash *cas.Hash
	done func()
}

func (s *Store) newPutPool(ctx context.Context, is *intentSet) *putPool {
	ctx, cancel := context.WithCancelCause(ctx)
	p := &putPool{s: s, ctx: ctx, cancel: cancel, jobs: make(chan putJob, 2*putWorkers), is: is}
	for range putWorkers {
		p.wg.Go(func() {
			for j := range p.jobs {
				p.store(j)
				if j.done != nil {
					j.done()
				}
			}
		})
	}
	return p
}

func (p *putPool) store(j putJob) {
	if p.ctx.Err() != nil {
		return
	}
	*j.hash = cas.Sum(j.data)
	id, _, err := p.s.addIntents(p.ctx, []cas.Hash{*j.hash})
	if err != nil {
		p.cancel(fmt.Errorf("put chunk %s: %w", j.hash.Short(), err))
		return
	}
	p.is.add(id)
	if err := p.s.put(p.ctx, *j.hash, j.data); err != nil {
		p.cancel(fmt.Errorf("put chunk %s: %w", j.hash.Short(), err))
	}
}

// add queues a chunk, waiting while the workers are busy. It fails once
// the pool has failed or its context ended (j.done is then called).
func (p *putPool) add(j putJob) error {
	select {
	case p.jobs <- j:
		return nil
	case <-p.ctx.Done():
		if j.done != nil {
			j.done()
		}
		return context.Cause(p.ctx)
	}
}

// wait waits for the queued chunks and returns the pool's first failure.
// No add may follow.
func (p *putPool) wait() error {
	close(p.jobs)
	p.wg.Wait()
	err := context.Cause(p.ctx)
	p.cancel(nil)
	return err
}
