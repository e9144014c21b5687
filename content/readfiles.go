package content

import (
	"context"
	"fmt"
	"io"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/meta"
)

// ReadAll returns the whole contents of the file m describes, verified as
// ReadAt verifies them, in a slice of the caller's.
func (s *Store) ReadAll(ctx context.Context, m Manifest) ([]byte, error) {
	data := make([]byte, m.Size)
	if m.Size == 0 {
		return data, nil
	}
	n, err := s.ReadAt(ctx, m, data, 0)
	if err == io.EOF && int64(n) == m.Size {
		err = nil
	}
	return data[:n], err
}

// ReadFiles reads the whole contents of the files ms describe, as ReadAll
// does, and calls fn with each file's bytes or error, in order. The inline
// bodies that are not cached are read from metadata together (one
// meta.Store.GetInlines request for all of ms instead of a query per
// file), then verified — against the checksum stored beside each when the
// metadata store keeps one (meta.CheckedInlines), else against its hash —
// and cached while the cache has room (a bulk read evicts nothing that
// other readers reuse); a body the store does not hold is
// errdefs.ErrCorrupt. A file of one chunk that is not cached
// is read straight from the blob store (verified there) and not cached: a
// bulk reader (an export, grep) reads it once, and caching it would evict
// what other readers reuse. data may be the cache's own bytes, not
// copied: fn may keep it but must not modify it. An error from fn stops
// ReadFiles and is returned. The bodies of all of ms are held at once:
// callers bound len(ms).
func (s *Store) ReadFiles(ctx context.Context, ms []Manifest, fn func(i int, data []byte, err error) error) error {
	bodies, loadErr := s.loadInlines(ctx, ms)
	for i, m := range ms {
		var data []byte
		var err error
		if s.batched(m) {
			data, err = s.readInline(ctx, m.Extents[0], bodies, loadErr)
		} else {
			data, err = s.readOnce(ctx, m)
		}
		if err := fn(i, data, err); err != nil {
			return err
		}
	}
	return nil
}

// batched reports whether ReadFiles reads m's body in its batch: a valid
// inline manifest of a non-empty file (ReadAll reports the others' errors)
// of a valid Store.
func (s *Store) batched(m Manifest) bool {
	return s.err == nil && m.Inline && m.Size > 0 && m.check() == nil
}

// body is an inline body as loadInlines read it: checked when it matched
// the checksum stored with it (meta.CheckedInlines), else still to be
// verified against its hash.
type body struct {
	data    []byte
	checked bool
}

// loadInlines reads the inline bodies of ms that are not cached, by hash,
// with the stored checksums' verdicts when the metadata store keeps them.
// A body that is absent is absent from the map.
func (s *Store) loadInlines(ctx context.Context, ms []Manifest) (map[cas.Hash]body, error) {
	var hs []cas.Hash
	for _, m := range ms {
		if s.batched(m) && !s.cache.has(m.Extents[0].Hash) {
			hs = append(hs, m.Extents[0].Hash)
		}
	}
	if len(hs) == 0 {
		return nil, nil
	}
	bodies := make(map[cas.Hash]body, len(hs))
	add := func(h cas.Hash, data []byte, checked bool) error {
		bodies[h] = body{data, checked}
		return nil
	}
	var err error
	if c, ok := s.opts.Meta.(meta.CheckedInlines); ok {
		err = c.GetCheckedInlines(ctx, hs, add)
	} else {
		err = s.opts.Meta.GetInlines(ctx, hs, func(h cas.Hash, data []byte) error { return add(h, data, false) })
	}
	return bodies, err
}

// readInline returns the verified inline body e (shared with the cache):
// from bodies, verified and cached, else from the cache or read on its
// own. A body cached when the batch was planned may have been evicted
// since, and one the store lacks is reported as loadInline reports it.
// loadErr, the batch's error, is the error of a body it left unread.
func (s *Store) readInline(ctx context.Context, e Extent, bodies map[cas.Hash]body, loadErr error) ([]byte, error) {
	if b, ok := bodies[e.Hash]; ok {
		return s.cacheInline(e, b)
	}
	data, err := s.fetch(ctx, e, func(ctx context.Context) ([]byte, error) {
		if loadErr != nil {
			return nil, loadErr
		}
		return s.loadInline(ctx, e)
	})
	if err != nil {
		return nil, fmt.Errorf("read content: %w", err)
	}
	return data, nil
}

// cacheInline verifies b, just read from metadata, as the inline body e
// (against its hash unless its stored checksum vouched for it) and caches
// it if the cache has room (cache.addIfRoom: a bulk read evicts nothing).
// A batch's bodies are read already, so they skip the cache's merging of
// concurrent loads (cache.fetch).
func (s *Store) cacheInline(e Extent, b body) ([]byte, error) {
	var err error
	if !b.checked {
		_, err = verifyInline(e, b.data)
	}
	if err == nil {
		s.cache.addIfRoom(e.Hash, b.data)
		err = checkSize(e, b.data)
	}
	if err != nil {
		return nil, fmt.Errorf("read content: %w", err)
	}
	return b.data, nil
}

// readOnce is ReadAll of m for a reader that reads it once: a file of one
// chunk that is not cached is read straight from the blob store (which
// verifies it) and its buffer returned as is, neither cached nor copied.
func (s *Store) readOnce(ctx context.Context, m Manifest) ([]byte, error) {
	if s.err != nil || m.Inline || len(m.Extents) != 1 || m.check() != nil {
		return s.ReadAll(ctx, m)
	}
	e := m.Extents[0]
	if e.Hash.IsZero() || s.cache.has(e.Hash) {
		return s.ReadAll(ctx, m)
	}
	data, err := s.loadChunk(ctx, e)
	if err == nil {
		err = checkSize(e, data)
	}
	if err != nil {
		return nil, fmt.Errorf("read content: %w", err)
	}
	return data, nil
}
