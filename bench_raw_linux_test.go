package forkspace_test

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// rawFiles is the floor of the local blob store under BenchmarkSequential:
// data written as 1 MiB files with the syscalls of a deferred put and
// nothing else (no chunking, hashing or metadata) — create a temp file,
// write, start its write-back, close, rename it into a two-level fan-out —
// from two goroutines. With fsync, each file is then fsynced, eight at a
// time, and each directory once, as the store's Sync does. The files are
// removed between iterations, off the clock.
func rawFiles(b *testing.B, data []byte, fsync bool) {
	const piece, workers = 1 << 20, 2
	dir := b.TempDir()
	tmp := filepath.Join(dir, "tmp")
	if err := os.Mkdir(tmp, 0o700); err != nil {
		b.Fatal(err)
	}
	n := len(data) / piece
	final := func(i int) string {
		return filepath.Join(dir, fmt.Sprintf("%02x", i%256), fmt.Sprintf("%02x", i/256), fmt.Sprint(i))
	}
	put := func(i int) error {
		if err := os.MkdirAll(filepath.Dir(final(i)), 0o700); err != nil {
			return err
		}
		f, err := os.CreateTemp(tmp, "raw-*")
		if err != nil {
			return err
		}
		_, err = f.Write(data[i*piece : (i+1)*piece])
		if err == nil {
			err = unix.SyncFileRange(int(f.Fd()), 0, 0, unix.SYNC_FILE_RANGE_WRITE)
		}
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err == nil {
			err = os.Rename(f.Name(), final(i))
		}
		return err
	}
	fsyncPath := func(path string) error {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		err = f.Sync()
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	}
	// each runs fn on 0..k-1 with w goroutines.
	each := func(k, w int, fn func(int) error) {
		var wg sync.WaitGroup
		for g := range w {
			wg.Go(func() {
				for i := g; i < k; i += w {
					if err := fn(i); err != nil {
						b.Error(err)
						return
					}
				}
			})
		}
		wg.Wait()
	}
	b.SetBytes(int64(len(data)))
	cpu := startCPU(b)
	defer cpu.report()
	for b.Loop() {
		each(n, workers, put)
		if fsync {
			each(n, 8, func(i int) error { return fsyncPath(final(i)) })
			// Each new leaf directory and its shard directory (the
			// store creates them as a fresh store does; i < 256 here).
			each(n, 8, func(i int) error {
				leaf := filepath.Dir(final(i))
				return errors.Join(fsyncPath(leaf), fsyncPath(filepath.Dir(leaf)))
			})
		}
		cpu.stop()
		for i := range n {
			if err := os.RemoveAll(filepath.Join(dir, fmt.Sprintf("%02x", i%256))); err != nil {
				b.Fatal(err)
			}
		}
		cpu.resume()
	}
}

// processCPU returns the user and system time this process has used.
func processCPU() time.Duration {
	var r syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &r); err != nil {
		return 0
	}
	return time.Duration(r.Utime.Nano() + r.Stime.Nano())
}
