package tmpfile

import (
	"errors"
	"io"
	"os"
)

// Unlinked creates a file in the default temporary directory, named after
// pattern as os.CreateTemp names it, and removes its name at once: the
// file lives as long as the returned descriptor, and a crash leaves
// nothing behind.
func Unlinked(pattern string) (*os.File, error) {
	f, err := os.CreateTemp("", pattern)
	if err != nil {
		return nil, err
	}
	if err := os.Remove(f.Name()); err != nil {
		return nil, errors.Join(err, f.Close())
	}
	return f, nil
}

// Log is an append-only unlinked temporary file, created by its first
// Append: where a buffer bounded in memory spills. The zero Log is empty.
type Log struct {
	f    *os.File
	size int64
}

// Append writes p after what the log holds. A failed write leaves the
// log's size as it was.
func (l *Log) Append(p []byte) error {
	if l.f == nil {
		f, err := Unlinked("forkspace-spill-*")
		if err != nil {
			return err
		}
		l.f = f
	}
	if _, err := l.f.WriteAt(p, l.size); err != nil {
		return err
	}
	l.size += int64(len(p))
	return nil
}

// Size is the number of bytes appended.
func (l *Log) Size() int64 { return l.size }

// ReadAt reads what was appended at off (io.ReaderAt).
func (l *Log) ReadAt(p []byte, off int64) (int, error) {
	if l.f == nil {
		return 0, io.EOF
	}
	return l.f.ReadAt(p, off)
}

// Close removes the file, if any, and empties the log.
func (l *Log) Close() error {
	if l.f == nil {
		return nil
	}
	err := l.f.Close()
	*l = Log{}
	return err
}
