package packblob

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/forkspace/forkspace/blob"
	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/meta"
)

var (
	_ blob.Store    = (*Store)(nil)
	_ blob.Deferred = (*Store)(nil)
)

// Defaults of Options.
const (
	// DefaultMaxPacked is the largest blob packed: larger ones are
	// objects of their own.
	DefaultMaxPacked = 1 << 20
	// DefaultPackSize is the size at which a pack being filled is
	// stored without waiting for a Sync (packs end up 12–13 MiB).
	DefaultPackSize = 12 << 20
	// DefaultReadAhead is how much of a pack a read of one of its blobs
	// fetches for Options.Prefetched.
	DefaultReadAhead = 4 << 20
	// DefaultUploads bounds the full packs being stored at once; a put
	// that fills one more waits.
	DefaultUploads = 4
)

// Options configure a Store. Packs and Meta are required.
type Options struct {
	// Packs holds the pack objects (blob.Packable's PackStore).
	Packs blob.Store
	// Meta holds the pack index (meta.PackTx). The Store does not close
	// it.
	Meta meta.Store
	// MaxPacked, PackSize and Uploads: see the defaults.
	MaxPacked int
	PackSize  int
	Uploads   int
	// Prefetched, if set, is given the blobs that follow a packed blob
	// in its pack, up to ReadAhead bytes (DefaultReadAhead if zero), each
	// verified, when that blob is read whole: blobs written together are
	// mostly read together, and a cache that keeps them saves a request
	// each.
	Prefetched func(id cas.Hash, data []byte)
	ReadAhead  int
}

// packRoom is the room a pack being filled needs: it is sealed once it
// holds PackSize bytes, so the last blob may take it MaxPacked past
// that, and its index follows (48 bytes a blob: room for blobs of 12 KiB
// on average; a pack of smaller ones grows once more).
func (o Options) packRoom() int {
	return o.PackSize + o.MaxPacked + (o.PackSize+o.MaxPacked)/256
}

// roomAfter is the room of the pack that follows sealed pack p: a pack
// sealed full (an import) is followed by one with all the room it needs,
// one sealed small by a Sync (a commit of a few files) by one twice its
// size, since clearing the room of a full pack for every commit would
// cost more than the commit (28% of the CPU of 16 concurrent writers
// committing a file each).
func (o Options) roomAfter(p *pack) int {
	return min(o.packRoom(), 2*len(p.buf))
}

// Store is a blob.Store that packs small blobs (see the package
// documentation). It is safe for concurrent use.
type Store struct {
	blobs    blob.Store
	deferred blob.Deferred    // blobs, when it defers puts
	ranges   blob.RangeReader // o.Packs, when it reads ranges in one request
	o        Options

	ctx     context.Context // of uploads, canceled by Close
	cancel  context.CancelFunc
	closed  atomic.Bool
	uploads sync.WaitGroup

	mu     sync.Mutex
	open   *pack   // being filled
	sealed []*pack // being stored, oldest first
}

// New returns a Store keeping large blobs in blobs and small ones in packs
// in o.Packs, indexed in o.Meta. Missing Packs or Meta is fs.ErrInvalid.
func New(blobs blob.Store, o Options) (*Store, error) {
	if blobs == nil || o.Packs == nil || o.Meta == nil {
		return nil, fmt.Errorf("open pack store: %w: blobs, packs and metadata are required", fs.ErrInvalid)
	}
	o.MaxPacked = cmp.Or(o.MaxPacked, DefaultMaxPacked)
	o.PackSize = cmp.Or(o.PackSize, DefaultPackSize)
	o.Uploads = cmp.Or(o.Uploads, DefaultUploads)
	o.ReadAhead = cmp.Or(o.ReadAhead, DefaultReadAhead)
	s := &Store{blobs: blobs, o: o, open: newPack(o.packRoom())}
	s.deferred, _ = blobs.(blob.Deferred)
	s.ranges, _ = o.Packs.(blob.RangeReader)
	s.ctx, s.cancel = context.WithCancel(context.Background())
	return s, nil
}

// IfPackable returns b wrapped in a Store whose packs are b's PackStore
// when b is a blob.Packable (s3blob), o.Packs set so; otherwise b itself
// and false.
func IfPackable(b blob.Store, o Options) (blob.Store, bool, error) {
	p, ok := b.(blob.Packable)
	if !ok {
		return b, false, nil
	}
	o.Packs = p.PackStore()
	s, err := New(b, o)
	if err != nil {
		return b, false, err
	}
	return s, true, nil
}

func (s *Store) check(ctx context.Context, op string, id cas.Hash) error {
	if s.closed.Load() {
		return fmt.Errorf("%s blob %s: %w", op, id, fs.ErrClosed)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%s blob %s: %w", op, id, err)
	}
	return nil
}

// Put stores data under id. A small blob goes into the pack being filled,
// which is then stored with every other blob waiting (one pack for all
// concurrent puts); a large one is Put to the blob store.
func (s *Store) Put(ctx context.Context, id cas.Hash, data []byte) error {
	if err := s.check(ctx, "put", id); err != nil {
		return err
	}
	if len(data) > s.o.MaxPacked {
		return s.blobs.Put(ctx, id, data)
	}
	if err := s.PutDeferred(ctx, id, data); err != nil {
		return err
	}
	return s.syncPacks(ctx)
}

// PutDeferred stores data under id like Put, except that a small blob
// waits in memory, readable, until its pack is full or a Sync stores it:
// only then does it survive the process. (Its callers sync before any
// metadata names the blob, docs/decisions/021.) A large blob is put
// deferred when the blob store defers.
func (s *Store) PutDeferred(ctx context.Context, id cas.Hash, data []byte) error {
	if err := s.check(ctx, "put", id); err != nil {
		return err
	}
	if len(data) > s.o.MaxPacked {
		if s.deferred != nil {
			return s.deferred.PutDeferred(ctx, id, data)
		}
		return s.blobs.Put(ctx, id, data)
	}
	if _, ok := s.pending(id); ok {
		return nil
	}
	if _, err := s.entry(ctx, id); err == nil {
		return nil // packed already
	} else if !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("put blob %s: %w", id, err)
	}
	s.mu.Lock()
	var wait *pack
	if s.pendingLocked(id) == nil {
		s.open.add(id, data)
		if len(s.open.buf) >= s.o.PackSize {
			s.sealLocked()
			if len(s.sealed) > s.o.Uploads {
				wait = s.sealed[0]
			}
		}
	}
	s.mu.Unlock()
	if wait != nil {
		select {
		case <-wait.done: // its failure is reported to Sync
		case <-ctx.Done():
			return fmt.Errorf("put blob %s: %w", id, ctx.Err())
		}
	}
	return nil
}

// Sync stores every blob put before the call, deferred or not, with
// their index entries: the barrier before metadata may name them.
func (s *Store) Sync(ctx context.Context) error {
	if s.closed.Load() {
		return fmt.Errorf("sync blobs: %w", fs.ErrClosed)
	}
	var errs []error
	if s.deferred != nil {
		errs = append(errs, s.deferred.Sync(ctx))
	}
	errs = append(errs, s.syncPacks(ctx))
	return errors.Join(errs...)
}

// syncPacks seals the pack being filled and waits for every sealed pack.
func (s *Store) syncPacks(ctx context.Context) error {
	s.mu.Lock()
	s.sealLocked()
	wait := slices.Clone(s.sealed)
	s.mu.Unlock()
	var errs []error
	for _, p := range wait {
		select {
		case <-p.done:
			errs = append(errs, p.err)
		case <-ctx.Done():
			return fmt.Errorf("sync blobs: %w", ctx.Err())
		}
	}
	return errors.Join(errs...)
}

// sealLocked finishes the pack being filled, if it holds anything, and
// starts storing it.
func (s *Store) sealLocked() {
	p := s.open
	if p.empty() {
		return
	}
	p.finish()
	s.open = newPack(s.o.roomAfter(p))
	s.sealed = append(s.sealed, p)
	s.uploads.Add(1)
	go s.upload(p)
}

// upload stores a sealed pack. On failure its blobs go back into the pack
// being filled: their puts returned, so a later Sync must store them.
func (s *Store) upload(p *pack) {
	defer s.uploads.Done()
	err := s.store(s.ctx, p)
	s.mu.Lock()
	s.sealed = slices.DeleteFunc(s.sealed, func(q *pack) bool { return q == p })
	if err != nil {
		for _, e := range p.entries {
			if s.pendingLocked(e.Hash) == nil {
				s.open.add(e.Hash, p.buf[e.Offset:e.Offset+e.Size])
			}
		}
	}
	s.mu.Unlock()
	p.err = err
	close(p.done)
}

// store records the pack, writes its object, then indexes its blobs: a
// crash in between leaves a pack recorded as uploading, which compaction
// removes once it is older than the intent expiry.
func (s *Store) store(ctx context.Context, p *pack) error {
	id := cas.Sum(p.buf)
	if err := s.o.Meta.Update(ctx, func(tx meta.Tx) error { return tx.AddPack(id, int64(len(p.buf))) }); err != nil {
		return fmt.Errorf("store pack %s: %w", id.Short(), err)
	}
	if err := s.o.Packs.Put(ctx, id, p.buf); err != nil {
		return fmt.Errorf("store pack %s: %w", id.Short(), err)
	}
	if err := s.o.Meta.Update(ctx, func(tx meta.Tx) error { return tx.IndexPack(id, p.entries) }); err != nil {
		return fmt.Errorf("store pack %s: %w", id.Short(), err)
	}
	return nil
}

// pending returns a copy of blob id if it waits in a pack not yet stored.
func (s *Store) pending(id cas.Hash) ([]byte, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if p := s.pendingLocked(id); p != nil {
		return p.bytes(id)
	}
	return nil, false
}

func (s *Store) pendingLocked(id cas.Hash) *pack {
	if _, ok := s.open.at[id]; ok {
		return s.open
	}
	for _, p := range s.sealed {
		if _, ok := p.at[id]; ok {
			return p
		}
	}
	return nil
}

// entry looks blob id up in the pack index.
func (s *Store) entry(ctx context.Context, id cas.Hash) (meta.PackEntry, error) {
	var e meta.PackEntry
	err := s.o.Meta.View(ctx, func(tx meta.Tx) error {
		var err error
		e, err = tx.PackEntry(id)
		return err
	})
	return e, err
}

// Get reads a range of a blob (see blob.Store.Get): a waiting blob from
// memory, a packed one with one ranged read of its pack, others from the
// blob store. A read of a whole packed blob is verified; a pack that is
// missing or holds other bytes is errdefs.ErrCorrupt.
func (s *Store) Get(ctx context.Context, id cas.Hash, off, length int64) ([]byte, error) {
	if err := s.check(ctx, "get", id); err != nil {
		return nil, err
	}
	if off < 0 {
		return nil, fmt.Errorf("get blob %s: %w: negative offset %d", id, fs.ErrInvalid, off)
	}
	if data, ok := s.pending(id); ok {
		a, b, err := span(id, int64(len(data)), off, length)
		if err != nil {
			return nil, err
		}
		return data[a:b], nil
	}
	e, err := s.entry(ctx, id)
	switch {
	case err == nil:
		return s.getPacked(ctx, e, off, length)
	case !errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("get blob %s: %w", id, err)
	}
	return s.blobs.Get(ctx, id, off, length)
}

// span returns the bytes [a, b) a read of length at off takes from a blob
// of size bytes.
func span(id cas.Hash, size, off, length int64) (a, b int64, err error) {
	if off > size {
		return 0, 0, fmt.Errorf("get blob %s: %w: offset %d outside size %d", id, fs.ErrInvalid, off, size)
	}
	b = size
	if length >= 0 {
		b = min(b, off+length)
	}
	return off, b, nil
}

// getPacked reads [off, off+length) of packed blob e.
func (s *Store) getPacked(ctx context.Context, e meta.PackEntry, off, length int64) ([]byte, error) {
	a, b, err := span(e.Hash, e.Size, off, length)
	if err != nil {
		return nil, err
	}
	if a == b {
		return []byte{}, nil
	}
	data, ok := s.readAhead(ctx, e, a, b)
	if !ok {
		var err error
		if data, e, err = s.readPack(ctx, e, a, b-a); err != nil {
			return nil, err
		}
	}
	if a == 0 && b == e.Size && !cas.Verify(e.Hash, data) {
		return nil, fmt.Errorf("get blob %s: %w: pack %s holds other bytes at %d", e.Hash, errdefs.ErrCorrupt, e.Pack.Short(), e.Offset)
	}
	return data, nil
}

// readAhead reads whole blob e and the blobs after it in its pack, up to
// Options.ReadAhead bytes, in one request, and hands the others, verified,
// to Options.Prefetched. It reports false, having read nothing, when
// there is nothing to read ahead or the read fails (the plain read then
// reports why).
func (s *Store) readAhead(ctx context.Context, e meta.PackEntry, a, b int64) ([]byte, bool) {
	if s.o.Prefetched == nil || a != 0 || b != e.Size {
		return nil, false
	}
	limit := e.Offset + max(int64(s.o.ReadAhead), e.Size)
	var next []meta.PackEntry
	err := s.o.Meta.View(ctx, func(tx meta.Tx) error {
		next = next[:0]
		return tx.PackEntries(e.Pack, func(x meta.PackEntry) error {
			if x.Offset > e.Offset && x.Offset+x.Size <= limit {
				next = append(next, x)
			}
			return nil
		})
	})
	if err != nil || len(next) == 0 {
		return nil, false
	}
	end := e.Offset + e.Size
	for _, x := range next {
		end = max(end, x.Offset+x.Size)
	}
	data, err := s.readRange(ctx, e.Pack, e.Offset, end-e.Offset)
	if err != nil {
		return nil, false
	}
	for _, x := range next {
		if b := data[x.Offset-e.Offset : x.Offset-e.Offset+x.Size]; cas.Verify(x.Hash, b) {
			s.o.Prefetched(x.Hash, b)
		}
	}
	return data[:e.Size:e.Size], true
}

// readPack reads n bytes at off of packed blob e. A pack found missing is
// looked up once more, in case compaction moved the blob and the pack's
// grace period ran out meanwhile; missing still, it is corruption.
func (s *Store) readPack(ctx context.Context, e meta.PackEntry, off, n int64) ([]byte, meta.PackEntry, error) {
	for again := false; ; again = true {
		data, err := s.readRange(ctx, e.Pack, e.Offset+off, n)
		if err == nil {
			return data, e, nil
		}
		if !errors.Is(err, fs.ErrNotExist) || again {
			switch {
			case errors.Is(err, fs.ErrNotExist): // named by hash, never by the driver's key or request
				return nil, e, fmt.Errorf("get blob %s: %w: its pack %s is missing from the store", e.Hash, errdefs.ErrCorrupt, e.Pack.Short())
			case errors.Is(err, errdefs.ErrCorrupt):
				return nil, e, fmt.Errorf("get blob %s: %w: its pack %s is damaged: %v", e.Hash, errdefs.ErrCorrupt, e.Pack.Short(), err)
			}
			return nil, e, fmt.Errorf("get blob %s: %w", e.Hash, err)
		}
		moved, lerr := s.entry(ctx, e.Hash)
		switch {
		case errors.Is(lerr, fs.ErrNotExist):
			return nil, e, fmt.Errorf("get blob %s: %w", e.Hash, fs.ErrNotExist) // deleted meanwhile
		case lerr != nil:
			return nil, e, fmt.Errorf("get blob %s: %w", e.Hash, lerr)
		}
		e = moved
	}
}

// readRange reads exactly n bytes at off of pack id.
func (s *Store) readRange(ctx context.Context, id cas.Hash, off, n int64) ([]byte, error) {
	if s.ranges != nil {
		return s.ranges.ReadRange(ctx, id, off, n)
	}
	data, err := s.o.Packs.Get(ctx, id, off, n)
	if err == nil && int64(len(data)) != n {
		err = fmt.Errorf("read pack %s: %w: %d bytes at %d, want %d", id.Short(), errdefs.ErrCorrupt, len(data), off, n)
	}
	if errors.Is(err, fs.ErrInvalid) { // the pack is shorter than its index says
		err = fmt.Errorf("read pack %s: %w: %w", id.Short(), errdefs.ErrCorrupt, err)
	}
	return data, err
}

// Stat returns a blob's size and stored time (for a packed blob, when it
// was indexed; for one waiting in memory, now).
func (s *Store) Stat(ctx context.Context, id cas.Hash) (blob.Info, error) {
	if err := s.check(ctx, "stat", id); err != nil {
		return blob.Info{}, err
	}
	if data, ok := s.pending(id); ok {
		return blob.Info{ID: id, Size: int64(len(data)), ModTime: time.Now()}, nil
	}
	e, err := s.entry(ctx, id)
	switch {
	case err == nil:
		return blob.Info{ID: id, Size: e.Size, ModTime: e.CreatedAt}, nil
	case !errors.Is(err, fs.ErrNotExist):
		return blob.Info{}, fmt.Errorf("stat blob %s: %w", id, err)
	}
	return s.blobs.Stat(ctx, id)
}

// List calls fn for every packed blob (from one snapshot of the index),
// then for every blob of the blob store not packed too. Blobs waiting in
// memory are not listed.
func (s *Store) List(ctx context.Context, fn func(blob.Info) error) error {
	if s.closed.Load() {
		return fmt.Errorf("list blobs: %w", fs.ErrClosed)
	}
	packed := map[cas.Hash]bool{}
	err := s.o.Meta.View(ctx, func(tx meta.Tx) error {
		clear(packed) // View may run fn again
		return tx.PackEntries(cas.Hash{}, func(e meta.PackEntry) error {
			packed[e.Hash] = true
			return fn(blob.Info{ID: e.Hash, Size: e.Size, ModTime: e.CreatedAt})
		})
	})
	if err != nil {
		return err
	}
	return s.blobs.List(ctx, func(bi blob.Info) error {
		if packed[bi.ID] {
			return nil
		}
		return fn(bi)
	})
}

// Delete removes a blob: a packed one's index entry (its bytes stay in
// the pack until compaction rewrites or retires it), else the blob
// store's object.
func (s *Store) Delete(ctx context.Context, id cas.Hash) error {
	if err := s.check(ctx, "delete", id); err != nil {
		return err
	}
	var packed bool
	err := s.o.Meta.Update(ctx, func(tx meta.Tx) error {
		_, err := tx.PackEntry(id)
		if packed = err == nil; !packed {
			if errors.Is(err, fs.ErrNotExist) {
				return nil
			}
			return err
		}
		return tx.DropPackEntries([]cas.Hash{id})
	})
	if err != nil {
		return fmt.Errorf("delete blob %s: %w", id, err)
	}
	if packed {
		return nil
	}
	return s.blobs.Delete(ctx, id)
}

// Close stops the uploads, drops the blobs no Sync stored (no metadata
// names them) and closes the blob and pack stores, not the metadata.
// Calls after Close fail with fs.ErrClosed.
func (s *Store) Close() error {
	if s.closed.Swap(true) {
		return fmt.Errorf("close pack store: %w", fs.ErrClosed)
	}
	s.cancel()
	s.uploads.Wait()
	return errors.Join(s.blobs.Close(), s.o.Packs.Close())
}
