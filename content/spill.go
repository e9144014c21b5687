package content

import (
	"fmt"
	"os"
	"slices"
	"sync"

	"github.com/forkspace/forkspace/internal/tmpfile"
)

// logBlock is the unit of a dirtyLog's memory past its first logBlock
// bytes (which grow like a slice, so small drafts stay small): fixed
// blocks never move, so appending copies each byte once, and they are
// pooled across drafts.
const logBlock = 1 << 20

var blockPool = sync.Pool{New: func() any { return new([logBlock]byte) }}

// dirtyLog is an append-only log of a Draft's written bytes: in memory
// until it would pass limit bytes, then in a temp file that is unlinked at
// once, so a crash leaves nothing behind.
//
// A draft committing ahead in the background writes into a flat log
// instead (flat): one buffer of flatBytes, so the chunker reads its bytes
// where they are instead of copying them into windows. Past flatBytes it
// becomes a log of blocks.
type dirtyLog struct {
	limit  int64
	head   []byte            // log bytes [0, logBlock)
	blocks []*[logBlock]byte // block i holds [(i+1)*logBlock, (i+2)*logBlock)
	flat   *[flatBytes]byte  // when set, log bytes [0, flatBytes); head and blocks unused
	file   *os.File
	size   int64
	spare  []*[logBlock]byte // blocks kept by recycle for the next appends
}

// flatBytes is the size of a flat log: a vfs handle's 16 MiB commit
// ahead, the undecided tail before it (less than Params.MaxSize) and
// room for the write that passes 16 MiB.
const flatBytes = 32 << 20

var flatPool = sync.Pool{New: func() any { return new([flatBytes]byte) }}

// unflatten moves a flat log's bytes into blocks.
func (l *dirtyLog) unflatten() {
	f := l.flat
	n := l.size
	l.flat, l.size = nil, 0
	l.appendMem(f[:n])
	flatPool.Put(f)
}

// append adds p to the log and returns its offset in the log.
func (l *dirtyLog) append(p []byte) (int64, error) {
	off := l.size
	if l.file == nil && l.size+int64(len(p)) > l.limit {
		if err := l.spill(); err != nil {
			return 0, err
		}
	}
	if l.file != nil {
		if _, err := l.file.WriteAt(p, off); err != nil {
			return 0, fmt.Errorf("write draft spill file: %w", err)
		}
		l.size += int64(len(p))
		return off, nil
	}
	l.appendMem(p)
	return off, nil
}

// appendFill appends n bytes that fill writes into the slices it is
// given (p receives the bytes at off of the n) and returns their offset in
// the log, copying them once into memory. On error the log is as it was.
func (l *dirtyLog) appendFill(n int64, fill func(p []byte, off int64) error) (int64, error) {
	start := l.size
	if l.file == nil && l.size+n > l.limit {
		if err := l.spill(); err != nil {
			return 0, err
		}
	}
	if l.file != nil {
		buf := make([]byte, min(n, logBlock))
		for done := int64(0); done < n; {
			b := buf[:min(n-done, logBlock)]
			if err := fill(b, done); err != nil {
				return 0, err
			}
			if _, err := l.file.WriteAt(b, start+done); err != nil {
				return 0, fmt.Errorf("write draft spill file: %w", err)
			}
			done += int64(len(b))
		}
		l.size += n
		return start, nil
	}
	if err := l.fillMem(n, fill); err != nil {
		return 0, err
	}
	return start, nil
}

// fillMem appends n bytes to the log's memory (the log must not have
// spilled), which fill writes into the slices it is given (p receives
// the bytes at off of the n). On error the log is as it was.
func (l *dirtyLog) fillMem(n int64, fill func(p []byte, off int64) error) error {
	start := l.size
	if l.flat != nil {
		if l.size+n <= flatBytes {
			if err := fill(l.flat[l.size:l.size+n], 0); err != nil {
				return err
			}
			l.size += n
			return nil
		}
		l.unflatten()
	}
	for done := int64(0); done < n; {
		var b []byte
		if l.size < logBlock {
			k := int(min(n-done, logBlock-l.size))
			l.head = slices.Grow(l.head, k)[:l.size+int64(k)]
			b = l.head[l.size:]
		} else {
			if i := int(l.size/logBlock) - 1; i == len(l.blocks) {
				if k := len(l.spare); k > 0 {
					l.blocks, l.spare = append(l.blocks, l.spare[k-1]), l.spare[:k-1]
				} else {
					l.blocks = append(l.blocks, blockPool.Get().(*[logBlock]byte))
				}
			}
			b = l.mem(l.size)
			b = b[:min(int64(len(b)), n-done)]
		}
		if err := fill(b, done); err != nil {
			l.truncate(start)
			return err
		}
		l.size += int64(len(b))
		done += int64(len(b))
	}
	return nil
}

// truncate drops the log's bytes from size on, keeping its memory.
func (l *dirtyLog) truncate(size int64) {
	l.size = size
	if l.flat != nil {
		return
	}
	if size < logBlock {
		l.head = l.head[:size]
	}
	keep := 0
	if size > logBlock {
		keep = int((size - 1) / logBlock)
	}
	for len(l.blocks) > keep {
		k := len(l.blocks) - 1
		l.spare, l.blocks = append(l.spare, l.blocks[k]), l.blocks[:k]
	}
}

// appendMem adds p to the log's memory; the log must not have spilled.
func (l *dirtyLog) appendMem(p []byte) {
	_ = l.fillMem(int64(len(p)), func(b []byte, off int64) error {
		copy(b, p[off:])
		return nil
	})
}

func (l *dirtyLog) spill() error {
	f, err := tmpfile.Unlinked("forkspace-draft-*")
	if err != nil {
		return fmt.Errorf("create draft spill file: %w", err)
	}
	for off := int64(0); off < l.size; {
		b := l.mem(off)[:min(logBlock, l.size-off)]
		if _, err := f.WriteAt(b, off); err != nil {
			_ = f.Close()
			return fmt.Errorf("write draft spill file: %w", err)
		}
		off += int64(len(b))
	}
	l.release()
	l.file = f
	return nil
}

// readAt fills p from the log at off; the range must have been appended.
func (l *dirtyLog) readAt(p []byte, off int64) error {
	if l.file != nil {
		if _, err := l.file.ReadAt(p, off); err != nil {
			return fmt.Errorf("read draft spill file: %w", err)
		}
		return nil
	}
	for len(p) > 0 {
		n := copy(p, l.mem(off))
		p = p[n:]
		off += int64(n)
	}
	return nil
}

// mem returns the log memory from off to the end of its block.
func (l *dirtyLog) mem(off int64) []byte {
	if l.flat != nil {
		return l.flat[off:]
	}
	if off < logBlock {
		return l.head[off:]
	}
	return l.blocks[off/logBlock-1][off%logBlock:]
}

func (l *dirtyLog) release() {
	if l.flat != nil {
		flatPool.Put(l.flat)
		l.flat = nil
	}
	for _, b := range l.blocks {
		blockPool.Put(b)
	}
	for _, b := range l.spare {
		blockPool.Put(b)
	}
	l.head, l.blocks, l.spare = nil, nil, nil
}

// recycle empties the log like reset but keeps its memory for the next
// appends: a draft committing ahead refills its log every few MiB, and
// the pool drops blocks at each garbage collection (fresh memory costs
// page faults, more than the copies into it).
func (l *dirtyLog) recycle() {
	if l.file != nil {
		_ = l.file.Close()
		l.file = nil
	}
	l.spare = append(l.spare, l.blocks...)
	l.head, l.blocks, l.size = l.head[:0], nil, 0
}

// reset empties the log and releases its memory and file.
func (l *dirtyLog) reset() {
	l.release()
	if l.file != nil {
		_ = l.file.Close()
	}
	*l = dirtyLog{limit: l.limit}
}
