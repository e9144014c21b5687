package content

import (
	"fmt"
	"os"
)

// dirtyLog is an append-only log of a Draft's written bytes: in memory
// until it would pass limit bytes, then in a temp file that is unlinked at
// once, so a crash leaves nothing behind.
type dirtyLog struct {
	limit int64
	mem   []byte
	file  *os.File
	size  int64
}

// append adds p to the log and returns its offset in the log.
func (l *dirtyLog) append(p []byte) (int64, error) {
	off := l.size
	if l.file == nil && l.size+int64(len(p)) > l.limit {
		if err := l.spill(); err != nil {
			return 0, err
		}
	}
	if l.file == nil {
		l.mem = append(l.mem, p...)
	} else if _, err := l.file.WriteAt(p, off); err != nil {
		return 0, fmt.Errorf("write draft spill file: %w", err)
	}
	l.size += int64(len(p))
	return off, nil
}

func (l *dirtyLog) spill() error {
	f, err := os.CreateTemp("", "forkspace-draft-*")
	if err != nil {
		return fmt.Errorf("create draft spill file: %w", err)
	}
	if err := os.Remove(f.Name()); err != nil {
		_ = f.Close()
		return fmt.Errorf("unlink draft spill file: %w", err)
	}
	if _, err := f.WriteAt(l.mem, 0); err != nil {
		_ = f.Close()
		return fmt.Errorf("write draft spill file: %w", err)
	}
	l.file, l.mem = f, nil
	return nil
}

// readAt fills p from the log at off; the range must have been appended.
func (l *dirtyLog) readAt(p []byte, off int64) error {
	if l.file == nil {
		copy(p, l.mem[off:])
		return nil
	}
	if _, err := l.file.ReadAt(p, off); err != nil {
		return fmt.Errorf("read draft spill file: %w", err)
	}
	return nil
}

// reset empties the log and releases its memory and file.
func (l *dirtyLog) reset() {
	if l.file != nil {
		_ = l.file.Close()
	}
	*l = dirtyLog{limit: l.limit}
}
