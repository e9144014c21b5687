package mount_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/mount"
)

// source is an in-memory lazy, writable mount that counts requests, for
// tests: versions are "v<n>" and change on every Put.
type source struct {
	mu    sync.Mutex
	files map[string][]byte
	vers  map[string]string
	next  int

	lists, fetches, puts, deletes atomic.Int64
	// failList and failPut make List and Put fail with that error.
	failList, failPut error
	// fetchGate, when set, is received from before every Fetch returns.
	fetchGate chan struct{}
}

var (
	_ mount.Lazy     = (*source)(nil)
	_ mount.Writable = (*source)(nil)
)

func newSource(files map[string]string) *source {
	s := &source{files: map[string][]byte{}, vers: map[string]string{}}
	for p, b := range files {
		s.set(p, b)
	}
	return s
}

// set changes a file upstream (a new version).
func (s *source) set(p, data string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.next++
	s.files[p] = []byte(data)
	s.vers[p] = fmt.Sprintf("v%d", s.next)
}

// remove deletes a file upstream.
func (s *source) remove(p string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.files, p)
	delete(s.vers, p)
}

func (s *source) get(p string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.files[p]
	return string(b), ok
}

func (s *source) paths() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Sorted(maps.Keys(s.files))
}

func (s *source) Kind() string { return "test" }

func (s *source) List(ctx context.Context) ([]mount.Entry, error) {
	s.lists.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failList != nil {
		return nil, s.failList
	}
	var out []mount.Entry
	for p, b := range s.files {
		out = append(out, mount.Entry{Path: p, Size: int64(len(b)), Mode: 0o644, ModTime: time.Unix(1e9, 0), Version: s.vers[p]})
	}
	return out, nil
}

func (s *source) Fetch(ctx context.Context, rel string) ([]byte, error) {
	s.fetches.Add(1)
	if s.fetchGate != nil {
		<-s.fetchGate
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b, ok := s.files[rel]
	if !ok {
		return nil, &fs.PathError{Op: "fetch", Path: rel, Err: fs.ErrNotExist}
	}
	return slices.Clone(b), nil
}

func (s *source) Put(ctx context.Context, rel string, data []byte, ifVersion string) (string, error) {
	s.puts.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.failPut != nil {
		return "", s.failPut
	}
	if ifVersion != mount.Unconditional && s.vers[rel] != ifVersion {
		return "", &fs.PathError{Op: "put", Path: rel, Err: errdefs.ErrConflict}
	}
	s.next++
	s.files[rel] = slices.Clone(data)
	s.vers[rel] = fmt.Sprintf("v%d", s.next)
	return s.vers[rel], nil
}

func (s *source) Delete(ctx context.Context, rel, ifVersion string) error {
	s.deletes.Add(1)
	s.mu.Lock()
	defer s.mu.Unlock()
	if v, ok := s.vers[rel]; ok && ifVersion != "" && ifVersion != mount.Unconditional && v != ifVersion {
		return &fs.PathError{Op: "delete", Path: rel, Err: errdefs.ErrConflict}
	}
	delete(s.files, rel)
	delete(s.vers, rel)
	return nil
}

// conflicts records what a conflict hook hears.
type conflicts struct {
	mu  sync.Mutex
	got []mount.Conflict
}

func (c *conflicts) hook(cf mount.Conflict) mount.Resolution {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.got = append(c.got, cf)
	return mount.Accept
}

func (c *conflicts) reasons() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	var r []string
	for _, cf := range c.got {
		r = append(r, cf.Reason+":"+cf.RelPath)
	}
	return strings.Join(r, ",")
}

var errDown = fmt.Errorf("test source down: %w", mount.ErrUnavailable)

func isReadOnly(err error) bool {
	var pe *fs.PathError
	return errors.Is(err, errdefs.ErrReadOnly) && errors.As(err, &pe)
}
