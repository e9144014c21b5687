package fileblob

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/forkspace/forkspace/blob"
	"github.com/forkspace/forkspace/cas"
)

// listWorkers is how many leaf directories a listing reads at once: a
// million blobs fill all 65,536 of them, and each costs an open, a
// getdents and a close, which the kernel serves in parallel.
const listWorkers = 8

// List walks the two directory levels and calls fn for every file whose
// name is a blob address matching its directory. The tmp directory and
// any other names are skipped; blobs deleted during the walk are skipped.
func (s *Store) List(ctx context.Context, fn func(blob.Info) error) error {
	return s.walk(ctx, func(id cas.Hash) error {
		info, err := os.Lstat(s.Path(id))
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("list blobs: %w", err)
		}
		return fn(blob.Info{ID: id, Size: info.Size(), ModTime: info.ModTime()})
	})
}

// ListIDs implements blob.IDLister: List without a stat of every file.
func (s *Store) ListIDs(ctx context.Context, fn func(cas.Hash) error) error {
	return s.walk(ctx, fn)
}

// leaf is what one leaf directory held: the addresses of its blob files.
type leaf struct {
	ids []cas.Hash
	err error
}

// walk calls fn, on the calling goroutine, for each blob file's address,
// reading listWorkers shard directories at a time, each with its leaves.
func (s *Store) walk(ctx context.Context, fn func(cas.Hash) error) error {
	if s.closed.Load() {
		return fmt.Errorf("list blobs: %w", fs.ErrClosed)
	}
	tops, err := readNames(s.dir)
	if err != nil {
		return fmt.Errorf("list blobs: %w", err)
	}
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	shards := make(chan string)
	leaves := make(chan leaf, listWorkers)
	var wg sync.WaitGroup
	for range listWorkers {
		wg.Go(func() {
			for top := range shards {
				if !s.readShard(ctx, top, leaves) {
					return
				}
			}
		})
	}
	go func() {
		defer func() { close(shards); wg.Wait(); close(leaves) }()
		for _, top := range tops {
			if !isHexPair(top) {
				continue
			}
			select {
			case shards <- top:
			case <-ctx.Done():
				return
			}
		}
	}()
	for l := range leaves {
		if err := leafIDs(ctx, l, fn); err != nil {
			cancel()
			for range leaves { // let the workers finish
			}
			return err
		}
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("list blobs: %w", err)
	}
	return nil
}

// readShard reads shard directory top and each of its leaf directories
// (opened relative to it: readLeaf) and sends them to leaves, a failure
// as a leaf's err. It returns false once ctx is done.
func (s *Store) readShard(ctx context.Context, top string, leaves chan<- leaf) bool {
	send := func(l leaf) bool {
		select {
		case leaves <- l:
			return true
		case <-ctx.Done():
			return false
		}
	}
	d, err := os.Open(filepath.Join(s.dir, top))
	if errors.Is(err, fs.ErrNotExist) {
		return true // emptied and removed by a Delete meanwhile
	}
	if err != nil {
		return send(leaf{err: err})
	}
	defer d.Close()
	subs, err := d.ReadDir(-1)
	if errors.Is(err, fs.ErrNotExist) {
		return true // emptied and removed by a Delete after it was opened
	}
	if err != nil {
		return send(leaf{err: err})
	}
	buf := make([]byte, leafBufSize)
	for _, sub := range subs {
		if !sub.IsDir() || !isHexPair(sub.Name()) {
			continue
		}
		var l leaf
		l.err = readLeaf(d, sub.Name(), buf, func(name []byte) {
			if id, ok := blobName(name, top, sub.Name()); ok {
				l.ids = append(l.ids, id)
			}
		})
		if errors.Is(l.err, fs.ErrNotExist) {
			continue // emptied and removed by a Delete meanwhile
		}
		if !send(l) {
			return false
		}
	}
	return true
}

// leafIDs calls fn for each blob address of l.
func leafIDs(ctx context.Context, l leaf, fn func(cas.Hash) error) error {
	if l.err != nil {
		return fmt.Errorf("list blobs: %w", l.err)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("list blobs: %w", err)
	}
	for _, id := range l.ids {
		if err := fn(id); err != nil {
			return err
		}
	}
	return nil
}

// blobName returns the address that the name of a file in leaf directory
// top/sub spells, if it is a blob's: 64 hex digits beginning with top and
// sub.
func blobName(name []byte, top, sub string) (cas.Hash, bool) {
	var id cas.Hash
	if len(name) != 2*cas.Size || string(name[0:2]) != top || string(name[2:4]) != sub {
		return id, false
	}
	_, err := hex.Decode(id[:], name)
	return id, err == nil
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
