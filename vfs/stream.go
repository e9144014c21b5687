package vfs

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"

	"github.com/forkspace/forkspace/content"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/meta"
)

// stream stores what r yields until io.EOF as new contents for file
// name, at most room bytes (room < 0: no limit), and returns how many
// bytes it read and the stored contents with the intents that hold them.
// The bytes are chunked and stored as they arrive (content.WriteFrom):
// a large stream never spills to a temp file. On failure nothing is
// held.
func (f *FS) stream(ctx context.Context, op, name string, r io.Reader, room int64) (int64, content.Manifest, []meta.Object, content.Intents, error) {
	var rr *roomReader
	if room >= 0 {
		rr = &roomReader{r: r, left: room, room: room, quota: f.quota.MaxBytes}
		r = rr
	}
	n, m, inline, in, err := f.d.Content.WriteFrom(ctx, r)
	if err != nil {
		if rr != nil && errors.Is(err, errdefs.ErrQuota) {
			err = rr.over // the quota's message, not the chunker's
		}
		return n, m, nil, nil, &fs.PathError{Op: op, Path: name, Err: err}
	}
	return n, m, inline, in, nil
}

// roomReader fails a stream that grows past room bytes with
// errdefs.ErrQuota.
type roomReader struct {
	r          io.Reader
	left, room int64
	quota      int64
	over       error
}

func (q *roomReader) Read(p []byte) (int, error) {
	n, err := q.r.Read(p)
	if q.left -= int64(n); q.left < 0 {
		q.over = fmt.Errorf("%w: the file needs more than the %d bytes left of the %d-byte quota", errdefs.ErrQuota, q.room, q.quota)
		return n, q.over
	}
	return n, err
}
