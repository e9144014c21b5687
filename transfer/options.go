package transfer

import (
	"context"
	"io"
)

// Options configure a transfer. The zero value means defaults.
type Options struct {
	// Progress, when set, is called after each entry and after each read
	// of file contents from the source. It runs on the calling goroutine
	// and must not block for long.
	Progress func(Progress)
	// Totals makes directory and workspace sources count their entries
	// and bytes first (a metadata-only walk of the whole tree before the
	// transfer starts), so Progress reports TotalFiles and TotalBytes;
	// without it they are -1. It matters only with Progress.
	Totals bool
	// Skip decides about a source entry that cannot be represented (a
	// device, FIFO or socket): return nil to skip it and go on, or an
	// error to stop. nil means stop with the error, which wraps
	// errors.ErrUnsupported.
	Skip func(name string, err error) error
	// Gzip compresses the output of ExportTar. Imports detect gzip input
	// by its magic number and ignore this field.
	Gzip bool
}

// Progress is a snapshot of a transfer's progress.
type Progress struct {
	// Files counts entries done: files, directories and links.
	Files int64
	// Bytes counts file content bytes copied.
	Bytes int64
	// TotalFiles and TotalBytes are the expected totals, or -1 when
	// unknown (Options.Totals unset, or tar input).
	TotalFiles int64
	TotalBytes int64
}

// meter reports progress to Options.Progress.
type meter struct {
	fn func(Progress)
	p  Progress
}

func newMeter(fn func(Progress), files, bytes int64) *meter {
	return &meter{fn: fn, p: Progress{TotalFiles: files, TotalBytes: bytes}}
}

func (m *meter) entry() {
	m.p.Files++
	m.report()
}

func (m *meter) bytes(n int) {
	m.p.Bytes += int64(n)
	m.report()
}

func (m *meter) report() {
	if m.fn != nil {
		m.fn(m.p)
	}
}

// bufSize is the copy buffer size: large enough to keep chunking and disk
// writes efficient, small enough to stream.
const bufSize = 1 << 20

// reader counts the bytes read through it into a meter and stops when the
// context is done.
type reader struct {
	ctx context.Context
	r   io.Reader
	m   *meter
}

func (r *reader) Read(p []byte) (int, error) {
	if err := r.ctx.Err(); err != nil {
		return 0, err
	}
	n, err := r.r.Read(p)
	if n > 0 {
		r.m.bytes(n)
	}
	return n, err
}
