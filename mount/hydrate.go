package mount

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"sync"

	"github.com/forkspace/forkspace/vfs"
)

// flights shares one fetch among concurrent readers of one stub.
type flights struct {
	mu sync.Mutex
	m  map[string]*flight
}

type flight struct {
	done chan struct{}
	err  error
}

// do runs fn once for key among concurrent callers; all get its error.
func (fl *flights) do(key string, fn func() error) error {
	fl.mu.Lock()
	if f, ok := fl.m[key]; ok {
		fl.mu.Unlock()
		<-f.done
		return f.err
	}
	if fl.m == nil {
		fl.m = map[string]*flight{}
	}
	f := &flight{done: make(chan struct{})}
	fl.m[key] = f
	fl.mu.Unlock()
	f.err = fn()
	fl.mu.Lock()
	delete(fl.m, key)
	fl.mu.Unlock()
	close(f.done)
	return f.err
}

// Hydrate fetches stub name from its source and stores the bytes as
// ordinary content in place of the stub (vfs.FS.FillStub). Concurrent
// calls for one stub share one Fetch. A stub whose mount is no longer in
// the table is fs.ErrNotExist; fetch errors are returned as they are
// (the stub stays a stub).
func (m *Manager) Hydrate(ctx context.Context, name string) error {
	marker, err := m.cfg.FS.Getxattr(ctx, name, vfs.StubAttr)
	if isNotExist(err) {
		return nil // filled meanwhile
	}
	if err != nil {
		return err
	}
	root, rel, ok := parseMarker(marker)
	if !ok {
		return fmt.Errorf("hydrate %s: %w: bad stub marker", name, fs.ErrInvalid)
	}
	rows, err := m.byRoot(root)
	if err != nil {
		return fmt.Errorf("hydrate %s: %w", name, err)
	}
	mt := rows[0]
	return m.flights.do(string(marker), func() error {
		mnt, _, err := m.build(ctx, mt)
		if err != nil {
			return err
		}
		l, ok := mnt.(Lazy)
		if !ok {
			return fmt.Errorf("hydrate %s: %w: mount %s is not lazy", name, fs.ErrInvalid, root)
		}
		data, err := l.Fetch(ctx, rel)
		if err != nil {
			return fmt.Errorf("hydrate %s: %w", name, err)
		}
		return m.cfg.FS.FillStub(ctx, name, marker, data)
	})
}

// Prefetch hydrates every stub under root (every lazy mount for ""),
// Concurrency at a time, so later reads make no requests. Errors are
// joined; the stubs that failed stay stubs.
func (m *Manager) Prefetch(ctx context.Context, root string) error {
	m.awaitIndex(false)
	rows, err := m.byRoot(root)
	if err != nil {
		return err
	}
	var stubs []string
	for _, mt := range rows {
		if _, st, err := m.build(ctx, mt); err != nil || st != StrategyLazy {
			continue
		}
		err := fs.WalkDir(m.cfg.FS.IOFS(ctx), mt.path, func(p string, de fs.DirEntry, err error) error {
			if err != nil || !de.Type().IsRegular() {
				return err
			}
			if _, err := m.cfg.FS.Getxattr(ctx, p, vfs.StubAttr); err == nil {
				stubs = append(stubs, p)
			}
			return nil
		})
		if err != nil {
			return fmt.Errorf("prefetch %s: %w", mt.spec.Root, err)
		}
	}
	return m.parallel(stubs, func(p string) error { return m.Hydrate(ctx, p) })
}

// parallel runs fn over items, Concurrency at a time, and joins errors.
func (m *Manager) parallel(items []string, fn func(string) error) error {
	sem := make(chan struct{}, m.cfg.Concurrency)
	errs := make([]error, len(items))
	var wg sync.WaitGroup
	for i, it := range items {
		sem <- struct{}{}
		wg.Go(func() {
			defer func() { <-sem }()
			errs[i] = fn(it)
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
