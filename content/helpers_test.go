package content_test

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/forkspace/forkspace/blob"
	"github.com/forkspace/forkspace/blob/memblob"
	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/chunk"
	"github.com/forkspace/forkspace/content"
	"github.com/forkspace/forkspace/meta"
	"github.com/forkspace/forkspace/meta/memmeta"
)

// small chunk parameters make many chunks out of little data.
var small = chunk.Params{MinSize: 64, AvgSize: 256, MaxSize: 1024}

// fakeMeta serves inline bodies from a map; callers store the bodies
// Commit and Write return. Transactions (upload intents) go to a memmeta
// store.
type fakeMeta struct {
	meta.Store
	mu      sync.Mutex
	bodies  map[cas.Hash][]byte
	batches int // GetInlines calls
}

func newFakeMeta() *fakeMeta {
	return &fakeMeta{Store: memmeta.New(), bodies: map[cas.Hash][]byte{}}
}

func (f *fakeMeta) GetInline(_ context.Context, h cas.Hash) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	b, ok := f.bodies[h]
	if !ok {
		return nil, fmt.Errorf("get inline %s: %w", h.Short(), fs.ErrNotExist)
	}
	return append([]byte(nil), b...), nil
}

func (f *fakeMeta) GetInlines(_ context.Context, hs []cas.Hash, fn func(cas.Hash, []byte) error) error {
	f.mu.Lock()
	f.batches++
	found := map[cas.Hash][]byte{}
	for _, h := range hs {
		if b, ok := f.bodies[h]; ok {
			found[h] = append([]byte(nil), b...)
		}
	}
	f.mu.Unlock()
	for h, b := range found {
		if err := fn(h, b); err != nil {
			return err
		}
	}
	return nil
}

func (f *fakeMeta) put(objs []meta.Object) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, o := range objs {
		f.bodies[o.Hash] = append([]byte(nil), o.Data...)
	}
}

// countingBlobs counts Puts and Gets of the store it wraps. Once
// failAfter is positive, the Puts past that many fail with errPut.
type countingBlobs struct {
	blob.Store
	puts, gets atomic.Int64
	failAfter  atomic.Int64
}

var errPut = errors.New("put refused by the test")

func (c *countingBlobs) Put(ctx context.Context, id cas.Hash, data []byte) error {
	n := c.puts.Add(1)
	if k := c.failAfter.Load(); k > 0 && n > k {
		return errPut
	}
	return c.Store.Put(ctx, id, data)
}

func (c *countingBlobs) Get(ctx context.Context, id cas.Hash, off, length int64) ([]byte, error) {
	c.gets.Add(1)
	return c.Store.Get(ctx, id, off, length)
}

// fataler is what helpers need of testing.TB and *rapid.T alike.
type fataler interface {
	Helper()
	Fatalf(format string, args ...any)
}

type env struct {
	store *content.Store
	meta  *fakeMeta
	blobs *countingBlobs
	opts  content.Options
}

// newEnv returns a content store over memblob and a fake meta; opts
// supplies everything but Blobs and Meta.
func newEnv(t testing.TB, opts content.Options) *env {
	t.Helper()
	e := &env{meta: newFakeMeta(), blobs: &countingBlobs{Store: memblob.New()}}
	t.Cleanup(func() { _ = e.blobs.Close() })
	opts.Blobs, opts.Meta = e.blobs, e.meta
	if err := opts.Validate(); err != nil {
		t.Fatalf("options: %v", err)
	}
	e.opts = opts
	e.store = content.New(opts)
	return e
}

// reopen returns a store over the same blobs and meta with a cold cache.
func (e *env) reopen() *content.Store { return content.New(e.opts) }

func (e *env) write(t fataler, data []byte) content.Manifest {
	t.Helper()
	m, inline, _, err := e.store.Write(context.Background(), data)
	if err != nil {
		t.Fatalf("write %d bytes: %v", len(data), err)
	}
	e.meta.put(inline)
	return m
}

// writeReleased is write releasing the intents it took.
func (e *env) writeReleased(t fataler, data []byte) content.Manifest {
	t.Helper()
	m, inline, in, err := e.store.Write(context.Background(), data)
	if err == nil {
		err = e.store.Release(context.Background(), in)
	}
	if err != nil {
		t.Fatalf("write %d bytes: %v", len(data), err)
	}
	e.meta.put(inline)
	return m
}

func (e *env) commit(t fataler, d *content.Draft) content.Manifest {
	t.Helper()
	m, inline, _, err := d.Commit(context.Background())
	if err != nil {
		t.Fatalf("commit: %v", err)
	}
	e.meta.put(inline)
	return m
}

// readAll reads a whole file through s.
func readAll(t fataler, s *content.Store, m content.Manifest) []byte {
	t.Helper()
	buf := make([]byte, m.Size)
	if m.Size == 0 {
		return buf
	}
	if n, err := s.ReadAt(context.Background(), m, buf, 0); err != nil || int64(n) != m.Size {
		t.Fatalf("read %d bytes: got %d, %v", m.Size, n, err)
	}
	return buf
}

func randomBytes(seed uint64, n int) []byte {
	b := make([]byte, n)
	r := rand.New(rand.NewPCG(seed, 1))
	for i := 0; i+8 <= n; i += 8 {
		v := r.Uint64()
		for k := range 8 {
			b[i+k] = byte(v >> (8 * k))
		}
	}
	for i := n &^ 7; i < n; i++ {
		b[i] = byte(r.Uint32())
	}
	return b
}

// heldIntents returns how many upload intents are not released.
func (e *env) heldIntents(t fataler) int {
	t.Helper()
	held := 0
	err := e.meta.View(context.Background(), func(tx meta.Tx) error {
		return tx.Intents(func(in meta.Intent) error {
			if !in.Released {
				held++
			}
			return nil
		})
	})
	if err != nil {
		t.Fatalf("list intents: %v", err)
	}
	return held
}
