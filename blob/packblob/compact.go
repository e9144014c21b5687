package packblob

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/meta"
)

// Defaults of CompactOptions.
const (
	// DefaultMinLive is the live fraction below which a pack is
	// rewritten.
	DefaultMinLive = 0.5
	// DefaultUploadExpiry is how long a pack may stay uploading before
	// its writer is presumed dead and the pack retired (the collector's
	// intent expiry).
	DefaultUploadExpiry = 24 * time.Hour
)

// CompactOptions configure a compaction. The zero value means defaults
// and no grace period.
type CompactOptions struct {
	// Grace is how long a retired pack's object is kept before it is
	// deleted (readers that looked its blobs up before they moved may
	// still read it).
	Grace time.Duration
	// MinLive: a live pack whose entries take less than this fraction of
	// its bytes is rewritten (DefaultMinLive if zero).
	MinLive float64
	// UploadExpiry: a pack uploading for longer is retired
	// (DefaultUploadExpiry if zero).
	UploadExpiry time.Duration
}

// CompactPlan is what a compaction will do; making one changes nothing.
type CompactPlan struct {
	// Now is the database time the plan was made at.
	Now time.Time `json:"now"`
	// Rewrite are live packs below the live fraction: their live blobs
	// are copied into new packs and they are retired (and so are packs
	// with no live blob left).
	Rewrite []meta.Pack `json:"-"`
	// Abandoned are packs left uploading past the upload expiry.
	Abandoned []meta.Pack `json:"-"`
	// Expired are retired packs past the grace period: their objects are
	// deleted.
	Expired []meta.Pack `json:"-"`
	// Counts of the above, and the live bytes to copy.
	RewritePacks   int   `json:"rewrite_packs"`
	CopyBytes      int64 `json:"copy_bytes"`
	AbandonedPacks int   `json:"abandoned_packs"`
	ExpiredPacks   int   `json:"expired_packs"`
	ExpiredBytes   int64 `json:"expired_bytes"`

	s     *Store
	grace time.Duration
}

// CompactReport is what a compaction did.
type CompactReport struct {
	// Written counts the new packs and the blobs copied into them.
	WrittenPacks int   `json:"written_packs"`
	CopiedBlobs  int64 `json:"copied_blobs"`
	CopiedBytes  int64 `json:"copied_bytes"`
	// Retired counts packs retired (their objects wait for the grace
	// period).
	RetiredPacks int `json:"retired_packs"`
	// Deleted counts pack objects deleted and their bytes.
	DeletedPacks int   `json:"deleted_packs"`
	DeletedBytes int64 `json:"deleted_bytes"`
	// Damaged lists blobs left where they were because their bytes in
	// the pack did not match their address (fsck reports them).
	Damaged []cas.Hash `json:"-"`
}

// PlanCompaction reads the packs in one snapshot and plans a compaction.
func (s *Store) PlanCompaction(ctx context.Context, o CompactOptions) (*CompactPlan, error) {
	if s.closed.Load() {
		return nil, fmt.Errorf("plan compaction: %w", fs.ErrClosed)
	}
	o.MinLive = cmp.Or(o.MinLive, DefaultMinLive)
	o.UploadExpiry = cmp.Or(o.UploadExpiry, DefaultUploadExpiry)
	grace := max(o.Grace, 0)
	p := &CompactPlan{}
	err := s.o.Meta.View(ctx, func(tx meta.Tx) error {
		*p = CompactPlan{s: s, grace: grace}
		var err error
		if p.Now, err = tx.Now(); err != nil {
			return err
		}
		return tx.Packs(func(pk meta.Pack) error {
			switch {
			case pk.State == meta.PackLive && float64(pk.LiveBytes) < o.MinLive*float64(pk.Size):
				p.Rewrite = append(p.Rewrite, pk)
				p.CopyBytes += pk.LiveBytes
			case pk.State == meta.PackUploading && pk.CreatedAt.Before(p.Now.Add(-o.UploadExpiry)):
				p.Abandoned = append(p.Abandoned, pk)
			case expired(pk, p.Now, grace):
				p.Expired = append(p.Expired, pk)
				p.ExpiredBytes += pk.Size
			}
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("plan compaction: %w", err)
	}
	p.RewritePacks, p.AbandonedPacks, p.ExpiredPacks = len(p.Rewrite), len(p.Abandoned), len(p.Expired)
	return p, nil
}

// Execute carries the plan out:
//
//  1. abandoned uploads are retired;
//  2. the live blobs of the packs to rewrite are read (each verified),
//     written into new packs (recorded, stored, then in one transaction
//     made live, the blobs' entries moved to them — those still in the
//     old pack: a blob deleted meanwhile stays deleted — and the old
//     packs retired);
//  3. the objects of packs retired longer ago than the grace period (read
//     again: with no grace, those retired in step 2 too) are deleted,
//     then their records.
//
// A crash anywhere leaves the index pointing at whole packs: a new pack
// not yet made live is an abandoned upload, an old one not yet retired is
// rewritten again. Readers of a moved blob that looked it up before the
// move read the old pack, which stays for the grace period. Execute must
// not run concurrently with another compaction of the same store.
func (p *CompactPlan) Execute(ctx context.Context) (CompactReport, error) {
	var r CompactReport
	s := p.s
	for _, pk := range p.Abandoned {
		var ok bool
		err := s.o.Meta.Update(ctx, func(tx meta.Tx) error {
			var err error
			ok, err = tx.RetirePack(pk.ID)
			return err
		})
		if err != nil {
			return r, fmt.Errorf("retire abandoned pack %s: %w", pk.ID.Short(), err)
		}
		if ok {
			r.RetiredPacks++
		}
	}
	w := &rewriter{s: s, r: &r}
	for _, pk := range p.Rewrite {
		if err := w.add(ctx, pk); err != nil {
			return r, err
		}
	}
	if err := w.flush(ctx); err != nil {
		return r, err
	}
	var gone []meta.Pack
	err := s.o.Meta.View(ctx, func(tx meta.Tx) error {
		gone = gone[:0]
		now, err := tx.Now()
		if err != nil {
			return err
		}
		return tx.Packs(func(pk meta.Pack) error {
			if expired(pk, now, p.grace) {
				gone = append(gone, pk)
			}
			return nil
		})
	})
	if err != nil {
		return r, fmt.Errorf("list retired packs: %w", err)
	}
	for _, pk := range gone {
		if err := s.o.Packs.Delete(ctx, pk.ID); err != nil {
			return r, fmt.Errorf("delete pack %s: %w", pk.ID.Short(), err)
		}
		if err := s.o.Meta.Update(ctx, func(tx meta.Tx) error { return tx.DeletePack(pk.ID) }); err != nil {
			return r, fmt.Errorf("delete pack %s: %w", pk.ID.Short(), err)
		}
		r.DeletedPacks++
		r.DeletedBytes += pk.Size
	}
	return r, nil
}

// expired reports whether pk was retired at least grace before now.
func expired(pk meta.Pack, now time.Time, grace time.Duration) bool {
	return pk.State == meta.PackRetired && !pk.RetiredAt.After(now.Add(-grace))
}

// rewriter copies live blobs of old packs into new ones.
type rewriter struct {
	s   *Store
	r   *CompactReport
	cur *pack
	// from lists, per old pack in cur, the entries copied (with their new
	// offsets; Pack is set when cur is stored).
	from map[cas.Hash][]meta.PackEntry
}

// add copies the live blobs of old pack pk into the pack being filled,
// storing it whenever it is full.
func (w *rewriter) add(ctx context.Context, pk meta.Pack) error {
	var live []meta.PackEntry
	err := w.s.o.Meta.View(ctx, func(tx meta.Tx) error {
		live = live[:0]
		return tx.PackEntries(pk.ID, func(e meta.PackEntry) error { live = append(live, e); return nil })
	})
	if err != nil {
		return fmt.Errorf("rewrite pack %s: %w", pk.ID.Short(), err)
	}
	// One read of the whole pack; each blob is verified on its own, and
	// read on its own when the pack as a whole is damaged, so damage
	// where no live blob is does not stop the rewrite.
	var data []byte
	if len(live) > 0 {
		data, err = w.s.readRange(ctx, pk.ID, 0, pk.Size)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			for _, e := range live {
				w.r.Damaged = append(w.r.Damaged, e.Hash)
			}
			return nil // left as it is, for fsck to report
		case errors.Is(err, errdefs.ErrCorrupt):
			data = nil
		case err != nil:
			return fmt.Errorf("rewrite pack %s: %w", pk.ID.Short(), err)
		}
	}
	blobOf := func(e meta.PackEntry) ([]byte, error) {
		if data != nil && e.Offset+e.Size <= int64(len(data)) {
			return data[e.Offset : e.Offset+e.Size], nil
		}
		return w.s.readRange(ctx, pk.ID, e.Offset, e.Size)
	}
	if w.cur == nil {
		w.cur, w.from = newPack(w.s.o.packRoom()), map[cas.Hash][]meta.PackEntry{}
	}
	if _, ok := w.from[pk.ID]; !ok {
		w.from[pk.ID] = nil // retired even when nothing is copied
	}
	for _, e := range live {
		b, err := blobOf(e)
		if err != nil && !errors.Is(err, errdefs.ErrCorrupt) {
			return fmt.Errorf("rewrite pack %s: %w", pk.ID.Short(), err)
		}
		if err != nil || !cas.Verify(e.Hash, b) {
			w.r.Damaged = append(w.r.Damaged, e.Hash)
			continue
		}
		if len(w.cur.buf) >= w.s.o.PackSize {
			if err := w.flush(ctx); err != nil {
				return err
			}
			w.cur, w.from = newPack(w.s.o.packRoom()), map[cas.Hash][]meta.PackEntry{pk.ID: nil}
		}
		w.cur.add(e.Hash, b)
		w.from[pk.ID] = append(w.from[pk.ID], w.cur.entries[len(w.cur.entries)-1])
	}
	return nil
}

// flush stores the pack being filled and, in one transaction, makes it
// live, moves the copied entries into it and retires the old packs.
func (w *rewriter) flush(ctx context.Context) error {
	if w.cur == nil {
		return nil
	}
	p, from := w.cur, w.from
	w.cur, w.from = nil, nil
	var id cas.Hash
	if !p.empty() {
		p.finish()
		id = cas.Sum(p.buf)
		if err := w.s.o.Meta.Update(ctx, func(tx meta.Tx) error { return tx.AddPack(id, int64(len(p.buf))) }); err != nil {
			return fmt.Errorf("store rewritten pack %s: %w", id.Short(), err)
		}
		if err := w.s.o.Packs.Put(ctx, id, p.buf); err != nil {
			return fmt.Errorf("store rewritten pack %s: %w", id.Short(), err)
		}
	}
	var copied, bytes int64
	retired := 0
	err := w.s.o.Meta.Update(ctx, func(tx meta.Tx) error {
		copied, bytes, retired = 0, 0, 0
		if !p.empty() {
			if err := tx.IndexPack(id, nil); err != nil {
				return err
			}
		}
		for old, entries := range from {
			for i := range entries {
				entries[i].Pack = id
			}
			n, err := tx.MovePackEntries(old, entries)
			if err != nil {
				return err
			}
			copied += int64(n)
			for _, e := range entries {
				bytes += e.Size
			}
			ok, err := tx.RetirePack(old)
			if err != nil {
				return err
			}
			if ok {
				retired++
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("move blobs into rewritten pack %s: %w", id.Short(), err)
	}
	if !p.empty() {
		w.r.WrittenPacks++
	}
	w.r.CopiedBlobs += copied
	w.r.CopiedBytes += bytes
	w.r.RetiredPacks += retired
	return nil
}
