package vfs

import (
	"context"
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
// file. On failure it releases every intent it took.
func (f *FS) stream(ctx context.Context, op, name string, r io.Reader, room int64) (n int64, m content.Manifest, inline []meta.Object, in content.Intents, err error) {
	d := f.d.Content.NewDraft(content.Manifest{})
	defer d.Discard()
	defer func() {
		if err != nil {
			err = f.releaseOnError(ctx, &fs.PathError{Op: op, Path: name, Err: err}, in)
		}
	}()
	bp := streamBufs.Get().(*[streamBuf]byte)
	defer streamBufs.Put(bp)
	buf := bp[:]
	for {
		k, rerr := fill(r, buf)
		if k > 0 {
			if room >= 0 && n+int64(k) > room {
				return n + int64(k), m, nil, in, fmt.Errorf("%w: the file needs more than the %d bytes left of the %d-byte quota", errdefs.ErrQuota, room, f.quota.MaxBytes)
			}
			if _, err := d.WriteAt(buf[:k], n); err != nil {
				return n, m, nil, in, err
			}
			n += int64(k)
		}
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return n, m, nil, in, rerr
		}
		if err := ctx.Err(); err != nil {
			return n, m, nil, in, err
		}
		if d.BufferedSinceCommit() >= commitAhead {
			_, _, held, err := d.CommitAhead(ctx)
			if err != nil {
				return n, m, nil, in, err
			}
			in = append(in, held...)
		}
	}
	m, inline, held, err := d.Commit(ctx)
	return n, m, inline, append(in, held...), err
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
