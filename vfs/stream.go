package vfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"sync"

	"github.com/forkspace/forkspace/content"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/meta"
)

// stream stores what r yields until io.EOF as new contents for file
// name, at most room bytes (room < 0: no limit), and returns how many
// bytes it read and the stored contents with the intents that hold them.
// Like a handle, it commits ahead every commitAhead bytes, so a large
// stream's bytes are chunked as they arrive and never spill to a temp
// file. A commit ahead runs beside the reading: what arrives meanwhile
// waits in read buffers (at most commitAhead bytes of them) and goes to
// the draft when the commit is done, so the sender is not stalled while
// chunks are hashed and stored. On failure it releases every intent it
// took.
func (f *FS) stream(ctx context.Context, op, name string, r io.Reader, room int64) (n int64, m content.Manifest, inline []meta.Object, in content.Intents, err error) {
	d := f.d.Content.NewDraft(content.Manifest{})
	defer d.Discard()
	var pending readBufs
	defer pending.release()
	var ahead *aheadCommit // running beside the reading; owns d until done
	defer func() {
		if ahead != nil {
			held, aerr := ahead.wait()
			in = append(in, held...)
			err = errors.Join(err, aerr)
		}
		if err != nil {
			err = f.releaseOnError(ctx, &fs.PathError{Op: op, Path: name, Err: err}, in)
		}
	}()
	for {
		bp := streamBufs.Get().(*[streamBuf]byte)
		k, rerr := fill(r, bp[:])
		pending.add(bp, k)
		if room >= 0 && n+int64(k) > room {
			return n + int64(k), m, nil, in, fmt.Errorf("%w: the file needs more than the %d bytes left of the %d-byte quota", errdefs.ErrQuota, room, f.quota.MaxBytes)
		}
		n += int64(k)
		if rerr != nil && rerr != io.EOF {
			return n, m, nil, in, rerr
		}
		if err := ctx.Err(); err != nil {
			return n, m, nil, in, err
		}
		if ahead != nil && (rerr == io.EOF || pending.size >= commitAhead || ahead.finished()) {
			held, err := ahead.wait()
			ahead = nil
			in = append(in, held...)
			if err != nil {
				return n, m, nil, in, err
			}
		}
		if ahead != nil {
			continue
		}
		if err := pending.writeTo(d); err != nil {
			return n, m, nil, in, err
		}
		if rerr == io.EOF {
			break
		}
		if d.BufferedSinceCommit() >= commitAhead {
			ahead = startAhead(ctx, d)
		}
	}
	m, inline, held, err := d.Commit(ctx)
	return n, m, inline, append(in, held...), err
}

// aheadCommit is a draft's commit ahead running on its own goroutine.
type aheadCommit struct {
	done chan struct{}
	held content.Intents
	err  error
}

func startAhead(ctx context.Context, d *content.Draft) *aheadCommit {
	a := &aheadCommit{done: make(chan struct{})}
	go func() {
		defer close(a.done)
		_, _, a.held, a.err = d.CommitAhead(ctx)
	}()
	return a
}

func (a *aheadCommit) finished() bool {
	select {
	case <-a.done:
		return true
	default:
		return false
	}
}

func (a *aheadCommit) wait() (content.Intents, error) {
	<-a.done
	return a.held, a.err
}

// readBufs holds the read buffers of a stream not yet in its draft.
type readBufs struct {
	bufs []*[streamBuf]byte
	lens []int
	size int64
}

// add queues the first k bytes of bp, or returns bp to the pool when k
// is 0.
func (p *readBufs) add(bp *[streamBuf]byte, k int) {
	if k == 0 {
		streamBufs.Put(bp)
		return
	}
	p.bufs, p.lens = append(p.bufs, bp), append(p.lens, k)
	p.size += int64(k)
}

// writeTo appends the queued bytes to d and returns the buffers.
func (p *readBufs) writeTo(d *content.Draft) error {
	off := d.Size()
	for i, bp := range p.bufs {
		k, err := d.WriteAt(bp[:p.lens[i]], off)
		if err != nil {
			return err
		}
		off += int64(k)
	}
	p.release()
	return nil
}

// release returns the buffers to the pool.
func (p *readBufs) release() {
	for _, bp := range p.bufs {
		streamBufs.Put(bp)
	}
	p.bufs, p.lens, p.size = p.bufs[:0], p.lens[:0], 0
}

// streamBuf is the read size of WriteFileFrom.
const streamBuf = 256 << 10

// streamBufs holds WriteFileFrom's read buffers between calls: a small
// upload would otherwise allocate (and clear) 256 KiB for a few bytes.
var streamBufs = sync.Pool{New: func() any { return new([streamBuf]byte) }}

// fill reads into buf until it is full or r fails; a clean end of r is
// io.EOF with the bytes read before it. Unlike io.ReadFull it keeps r's
// own io.ErrUnexpectedEOF (an HTTP body whose connection broke) apart
// from a short last read, so a stream cut short is a failure.
func fill(r io.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		k, err := r.Read(buf[n:])
		n += k
		if err != nil {
			return n, err
		}
	}
	return n, nil
}
