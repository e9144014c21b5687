package storecopy

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/forkspace/forkspace/blob"
	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/meta"
)

// objectBatch is how many nodes or bodies one destination transaction
// writes.
const objectBatch = 512

// object is a node, inline body or blob to copy: its address and size.
type object struct {
	Hash cas.Hash
	Size int64
}

// objectKind is the code for one kind of object kept in metadata.
type objectKind struct {
	name string // "nodes", "bodies"
	list func(meta.Tx) func(func(meta.ObjectInfo) error) error
	get  func(meta.Store) func(context.Context, cas.Hash) ([]byte, error)
	put  func(meta.Tx, []meta.Object) error
}

var (
	nodeKind = objectKind{"nodes",
		func(tx meta.Tx) func(func(meta.ObjectInfo) error) error { return tx.Nodes },
		func(m meta.Store) func(context.Context, cas.Hash) ([]byte, error) { return m.GetNode },
		func(tx meta.Tx, objs []meta.Object) error { return tx.PutNodes(objs) }}
	bodyKind = objectKind{"bodies",
		func(tx meta.Tx) func(func(meta.ObjectInfo) error) error { return tx.InlineBodies },
		func(m meta.Store) func(context.Context, cas.Hash) ([]byte, error) { return m.GetInline },
		func(tx meta.Tx, objs []meta.Object) error { return tx.PutInline(objs) }}
)

// listObjects lists the nodes or bodies of m, by hash.
func listObjects(ctx context.Context, m meta.Store, k objectKind) ([]object, error) {
	var out []object
	err := m.View(ctx, func(tx meta.Tx) error {
		out = out[:0]
		return k.list(tx)(func(o meta.ObjectInfo) error {
			out = append(out, object{o.Hash, o.Size})
			return nil
		})
	})
	sortObjects(out)
	return out, err
}

func sortObjects(objs []object) {
	slices.SortFunc(objs, func(a, b object) int { return bytes.Compare(a.Hash[:], b.Hash[:]) })
}

// readVerified reads one object and checks it against its address.
func readVerified(ctx context.Context, get func(context.Context, cas.Hash) ([]byte, error), h cas.Hash) ([]byte, error) {
	data, err := get(ctx, h)
	if err != nil {
		return nil, err
	}
	if !cas.Verify(h, data) {
		return nil, fmt.Errorf("%s: %w: bytes do not match the address", h.Short(), errdefs.ErrCorrupt)
	}
	return data, nil
}

// copyObjects copies the listed nodes or bodies, each read and verified,
// in transactions of objectBatch.
func (c *copier) copyObjects(ctx context.Context, k objectKind, objs []object) error {
	get := k.get(c.src.Meta)
	var bytes int64
	for i := 0; i < len(objs); i += objectBatch {
		batch := make([]meta.Object, 0, objectBatch)
		for _, o := range objs[i:min(i+objectBatch, len(objs))] {
			data, err := readVerified(ctx, get, o.Hash)
			if err != nil {
				return fmt.Errorf("copy from %s: read %s: %w", c.src.Name, k.name, err)
			}
			batch = append(batch, meta.Object{Hash: o.Hash, Data: data})
			bytes += int64(len(data))
		}
		if err := c.dst.Meta.Update(ctx, func(tx meta.Tx) error { return k.put(tx, batch) }); err != nil {
			return fmt.Errorf("copy to %s: write %s: %w", c.dst.Name, k.name, err)
		}
		c.progress(k.name, int64(min(i+objectBatch, len(objs))), int64(len(objs)), bytes)
	}
	return nil
}

// verifyObjects checks that the destination holds exactly objs, each
// matching its address.
func (c *copier) verifyObjects(ctx context.Context, k objectKind, objs []object) error {
	got, err := listObjects(ctx, c.dst.Meta, k)
	if err != nil {
		return fmt.Errorf("verify %s: list %s: %w", c.dst.Name, k.name, err)
	}
	if !slices.Equal(got, objs) {
		return fmt.Errorf("verify %s: %w: it holds %d %s, the source %d", c.dst.Name, errdefs.ErrCorrupt, len(got), k.name, len(objs))
	}
	get := k.get(c.dst.Meta)
	for i, o := range objs {
		if _, err := readVerified(ctx, get, o.Hash); err != nil {
			return fmt.Errorf("verify %s: %s: %w", c.dst.Name, k.name, err)
		}
		if i%objectBatch == 0 {
			c.progress("verify "+k.name, int64(i), int64(len(objs)), 0)
		}
	}
	return nil
}

// listBlobs lists the blobs of s, by hash.
func listBlobs(ctx context.Context, s blob.Store) ([]object, error) {
	var (
		mu  sync.Mutex
		out []object
	)
	err := s.List(ctx, func(i blob.Info) error {
		mu.Lock()
		out = append(out, object{i.ID, i.Size})
		mu.Unlock()
		return nil
	})
	sortObjects(out)
	return out, err
}

// eachBlob runs fn on each blob with o.Parallel at once, reporting
// progress under phase; the first error ends it.
func (c *copier) eachBlob(ctx context.Context, phase string, blobs []object, fn func(context.Context, object) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next, done, bytes atomic.Int64
		wg                sync.WaitGroup
		errOnce           sync.Once
		first             error
		total             int64
	)
	for _, b := range blobs {
		total += b.Size
	}
	for range min(c.o.Parallel, max(len(blobs), 1)) {
		wg.Go(func() {
			for {
				i := next.Add(1) - 1
				if i >= int64(len(blobs)) || ctx.Err() != nil {
					return
				}
				if err := fn(ctx, blobs[i]); err != nil {
					errOnce.Do(func() { first = err; cancel() })
					return
				}
				c.progress(phase, done.Add(1), int64(len(blobs)), bytes.Add(blobs[i].Size))
			}
		})
	}
	wg.Wait()
	if first == nil {
		first = ctx.Err()
	}
	return first
}

// copyBlobs copies every listed blob (verified as read) to the
// destination and returns the list copied: all of them, or in a salvage
// those that could be read.
func (c *copier) copyBlobs(ctx context.Context, blobs []object) ([]object, error) {
	var (
		mu     sync.Mutex
		failed = map[cas.Hash]bool{}
	)
	// A store that can defer durability waits for the disk once, at the
	// end, instead of at every blob.
	put := c.dst.Blobs.Put
	deferred, isDeferred := c.dst.Blobs.(blob.Deferred)
	if isDeferred {
		put = deferred.PutDeferred
	}
	err := c.eachBlob(ctx, "blobs", blobs, func(ctx context.Context, b object) error {
		data, err := c.src.Blobs.Get(ctx, b.Hash, 0, -1)
		if err == nil && !cas.Verify(b.Hash, data) {
			err = fmt.Errorf("%w: bytes do not match the address", errdefs.ErrCorrupt)
		}
		if err != nil && c.o.Salvage && ctx.Err() == nil {
			mu.Lock()
			defer mu.Unlock()
			failed[b.Hash] = true
			return c.lostBlob(b.Hash, err)
		}
		if err != nil {
			return fmt.Errorf("copy from %s: blob %s: %w", c.src.Name, b.Hash, err)
		}
		if err := put(ctx, b.Hash, data); err != nil {
			return fmt.Errorf("copy to %s: blob %s: %w", c.dst.Name, b.Hash, err)
		}
		return nil
	})
	if err == nil && isDeferred {
		err = deferred.Sync(ctx)
	}
	if err != nil {
		return nil, err
	}
	blobs = slices.DeleteFunc(slices.Clone(blobs), func(b object) bool { return failed[b.Hash] })
	for _, b := range blobs {
		c.r.Blobs++
		c.r.BlobBytes += b.Size
	}
	return blobs, nil
}

// verifyBlobs reads every blob back from the destination and hashes it.
func (c *copier) verifyBlobs(ctx context.Context, blobs []object) error {
	got, err := listBlobs(ctx, c.dst.Blobs)
	if err != nil {
		return fmt.Errorf("verify %s: list blobs: %w", c.dst.Name, err)
	}
	if !slices.EqualFunc(got, blobs, func(a, b object) bool { return a.Hash == b.Hash }) {
		return fmt.Errorf("verify %s: %w: it holds %d blobs, the source %d", c.dst.Name, errdefs.ErrCorrupt, len(got), len(blobs))
	}
	return c.eachBlob(ctx, "verify blobs", blobs, func(ctx context.Context, b object) error {
		data, err := c.dst.Blobs.Get(ctx, b.Hash, 0, -1)
		if err == nil && (!cas.Verify(b.Hash, data) || int64(len(data)) != b.Size) {
			err = fmt.Errorf("%w: bytes do not match the address", errdefs.ErrCorrupt)
		}
		if err != nil {
			return fmt.Errorf("verify %s: blob %s: %w", c.dst.Name, b.Hash, err)
		}
		return nil
	})
}
