package fileblob

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/forkspace/forkspace/blob"
	"github.com/forkspace/forkspace/cas"
)

// List walks the two directory levels and calls fn for every file whose
// name is a blob address matching its directory. The tmp directory and
// any other names are skipped; blobs deleted during the walk are skipped.
func (s *Store) List(ctx context.Context, fn func(blob.Info) error) error {
	if s.closed.Load() {
		return fmt.Errorf("list blobs: %w", fs.ErrClosed)
	}
	tops, err := readNames(s.dir)
	if err != nil {
		return fmt.Errorf("list blobs: %w", err)
	}
	for _, top := range tops {
		if !isHexPair(top) {
			continue
		}
		subs, err := readNames(filepath.Join(s.dir, top))
		if errors.Is(err, fs.ErrNotExist) {
			continue // emptied and removed by a Delete meanwhile
		}
		if err != nil {
			return fmt.Errorf("list blobs: %w", err)
		}
		for _, sub := range subs {
			if !isHexPair(sub) {
				continue
			}
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("list blobs: %w", err)
			}
			if err := s.listLeaf(top, sub, fn); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *Store) listLeaf(top, sub string, fn func(blob.Info) error) error {
	leaf := filepath.Join(s.dir, top, sub)
	entries, err := os.ReadDir(leaf)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("list blobs: %w", err)
	}
	for _, e := range entries {
		name := e.Name()
		id, err := cas.Parse(name)
		if err != nil || name[0:2] != top || name[2:4] != sub || !e.Type().IsRegular() {
			continue
		}
		info, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("list blobs: %w", err)
		}
		if err := fn(blob.Info{ID: id, Size: info.Size(), ModTime: info.ModTime()}); err != nil {
			return err
		}
	}
	return nil
}

// readNames returns the names in dir; a vanished dir has none.
func readNames(dir string) ([]string, error) {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(entries))
	for _, e := range entries {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	return names, nil
}

func isHexPair(s string) bool {
	if len(s) != 2 {
		return false
	}
	for _, c := range []byte(s) {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}
