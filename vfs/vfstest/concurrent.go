package vfstest

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/forkspace/forkspace/vfs"
)

// testConcurrent runs writers in separate directories, readers across
// them, handles and folds at once, then checks each writer's result and
// the structural invariants.
func testConcurrent(t *testing.T, f *vfs.FS) {
	ctx := context.Background()
	const writers, rounds = 4, 12
	var wg sync.WaitGroup
	errs := make(chan error, writers+3)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- concurrentWriter(ctx, f, fmt.Sprintf("w%d", w), rounds)
		}()
	}
	stop := make(chan struct{})
	var bg sync.WaitGroup
	bg.Add(2)
	go func() { // reader
		defer bg.Done()
		for {
			select {
			case <-stop:
				errs <- nil
				return
			default:
			}
			ents, err := f.ReadDir(ctx, ".")
			if err != nil {
				errs <- err
				return
			}
			for _, e := range ents {
				if _, err := f.ReadDir(ctx, e.Name()); err != nil {
					errs <- err
					return
				}
			}
		}
	}()
	go func() { // folder
		defer bg.Done()
		for {
			select {
			case <-stop:
				errs <- nil
				return
			default:
			}
			if err := f.Fold(ctx); err != nil {
				errs <- err
				return
			}
		}
	}()
	wg.Wait()
	close(stop)
	bg.Wait()
	close(errs)
	for err := range errs {
		ok(t, err)
	}
	for w := range writers {
		dir := fmt.Sprintf("w%d", w)
		if got := read(t, f, dir+"/log"); len(got) != rounds {
			t.Fatalf("%s/log has %d bytes, want %d", dir, len(got), rounds)
		}
		ents, err := f.ReadDir(ctx, dir)
		ok(t, err)
		if len(ents) != 3 { // log, final, sub
			t.Fatalf("%s has %d entries", dir, len(ents))
		}
	}
	ok(t, f.Check(ctx))
}

// concurrentWriter builds and churns directory dir.
func concurrentWriter(ctx context.Context, f *vfs.FS, dir string, rounds int) error {
	if err := f.MkdirAll(ctx, dir+"/sub", 0o755); err != nil {
		return err
	}
	h, err := f.OpenFile(ctx, dir+"/log", vfs.O_WRONLY|vfs.O_CREATE|vfs.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	for i := range rounds {
		tmp := fmt.Sprintf("%s/tmp%d", dir, i)
		if err := f.WriteFile(ctx, tmp, []byte(tmp), 0o644); err != nil {
			return err
		}
		if err := f.Rename(ctx, tmp, dir+"/final"); err != nil {
			return err
		}
		if err := f.Symlink(ctx, "../final", dir+"/sub/l"); err != nil {
			return err
		}
		if err := f.Remove(ctx, dir+"/sub/l"); err != nil {
			return err
		}
		if _, err := h.Write([]byte{'x'}); err != nil {
			return err
		}
		if i%5 == 0 {
			if err := h.Sync(); err != nil {
				return err
			}
		}
	}
	return h.Close()
}
