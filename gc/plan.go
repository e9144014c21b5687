package gc

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"time"

	"github.com/forkspace/forkspace/blob"
	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/meta"
)

// Plan is what one collection found: what is reachable, and which
// unreachable objects are old enough to collect. Making a Plan deletes
// nothing (it is what `forkspace gc --dry-run` prints); Execute deletes.
type Plan struct {
	// Now is the snapshot's database time (T0); Cutoff is Now minus the
	// grace period: objects touched or stored since are kept.
	Now    time.Time `json:"now"`
	Cutoff time.Time `json:"cutoff"`
	// Reachable counts what the roots reach.
	Reachable Counts `json:"reachable"`
	// Garbage counts the unreachable objects Execute will delete (unless
	// a writer uses them again first).
	Garbage Counts `json:"garbage"`
	// Young counts unreachable objects kept because they are younger than
	// the grace period or named by an upload intent released since its
	// start.
	Young Counts `json:"young"`
	// Held counts unreachable objects kept because an upload still in
	// progress (a pending intent: an import, a large write) names them;
	// its commit will reach them, or its expiry free them.
	Held Counts `json:"held"`
	// Nodes, Bodies and Blobs are the garbage, by hash.
	Nodes  []cas.Hash `json:"-"`
	Bodies []cas.Hash `json:"-"`
	Blobs  []cas.Hash `json:"-"`

	deps  Deps
	opts  Options
	sizes map[cas.Hash]int64 // of the garbage blobs
	// intentsBefore is the cutoff for dropping pending intents.
	intentsBefore time.Time
}

// NewPlan reads the roots in one snapshot, marks what they reach, and
// lists the garbage. It is safe to run while the store is in use.
func NewPlan(ctx context.Context, d Deps, o Options) (*Plan, error) {
	o = o.withDefaults()
	// A store that lists addresses alone is listed while the roots are
	// read and marked: the one waits for the disk's directories, the
	// other for the database. The listing may begin before the snapshot:
	// it only proposes candidates, and a listed blob is garbage only if
	// the snapshot's roots do not reach it, its Stat (taken after the
	// mark) dates it before the cutoff and no recent intent names it.
	listCtx, stopListing := context.WithCancel(ctx)
	defer stopListing()
	listed := listIDs(listCtx, d.Blobs)
	s, err := readSnapshot(ctx, d, o, true)
	if err != nil {
		return nil, fmt.Errorf("plan collection: %w", err)
	}
	p := &Plan{
		Now: s.now, Cutoff: s.now.Add(-o.Grace), deps: d, opts: o,
		sizes: map[cas.Hash]int64{}, intentsBefore: s.now.Add(-o.IntentExpiry),
	}
	m := newMarker(d.KV)
	if err := m.owners(ctx, s, o); err != nil {
		return nil, fmt.Errorf("plan collection: %w", err)
	}
	p.Reachable = m.counts()

	held := pendingIntents(s)
	p.Nodes = p.sortObjects(kindNode, s.nodes, m.nodes, held)
	p.Bodies = p.sortObjects(kindBody, s.bodies, m.bodies, held)
	if err := p.listBlobs(ctx, s, m, listed); err != nil {
		return nil, fmt.Errorf("plan collection: %w", err)
	}
	return p, nil
}

// listing is the result of a blob store's ListIDs, when it has one.
type listing struct {
	ids blocks[cas.Hash]
	err error
}

// listIDs starts listing the blob addresses if the store lists them alone
// (blob.IDLister); the channel then yields the listing (else it is nil).
func listIDs(ctx context.Context, blobs blob.Store) <-chan listing {
	lister, ok := blobs.(blob.IDLister)
	if !ok {
		return nil
	}
	done := make(chan listing, 1)
	go func() {
		var l listing
		l.err = lister.ListIDs(ctx, func(id cas.Hash) error {
			l.ids.add(id)
			return nil
		})
		done <- l
	}()
	return done
}

// sortObjects sorts the stored objects of kind k that marked lacks into
// garbage (touched before the cutoff, returned), held (named by a pending
// intent) and young (touched since).
func (p *Plan) sortObjects(k kind, stored []meta.ObjectInfo, marked map[cas.Hash]int64, held map[cas.Hash]bool) []cas.Hash {
	var garbage []cas.Hash
	for _, oi := range stored {
		if _, ok := marked[oi.Hash]; ok {
			continue
		}
		switch {
		case held[oi.Hash]:
			p.Held.add(k, oi.Size)
		case oi.TouchedAt.Before(p.Cutoff):
			garbage = append(garbage, oi.Hash)
			p.Garbage.add(k, oi.Size)
		default:
			p.Young.add(k, oi.Size)
		}
	}
	return garbage
}

// pendingIntents returns the hashes of the pending upload intents. They
// are roots (meta.GCTx) of tree nodes and inline bodies as of blobs: a
// batch stores the bodies it imports, and the nodes of the tree it folds
// them into, under one before its commit names them (vfs.FS.Batch).
func pendingIntents(s *snapshot) map[cas.Hash]bool {
	held := map[cas.Hash]bool{}
	for _, in := range s.intents {
		if !in.Released {
			held[in.Hash] = true
		}
	}
	return held
}

// listBlobs sorts the stored blobs the roots do not reach into garbage,
// held and young. A blob of a pending intent is a root (held); one with an
// intent created since the cutoff was used recently (young). From a listing of addresses alone
// (listIDs), only the unreached blobs are asked their size and time.
func (p *Plan) listBlobs(ctx context.Context, s *snapshot, m *marker, listed <-chan listing) error {
	held, recent := pendingIntents(s), map[cas.Hash]bool{}
	for _, in := range s.intents {
		if !in.CreatedAt.Before(p.Cutoff) {
			recent[in.Hash] = true
		}
	}
	classify := func(bi blob.Info) {
		switch {
		case held[bi.ID]:
			p.Held.add(kindBlob, bi.Size)
			return
		case recent[bi.ID] || !bi.ModTime.Before(p.Cutoff):
			p.Young.add(kindBlob, bi.Size)
			return
		}
		p.Blobs = append(p.Blobs, bi.ID)
		p.sizes[bi.ID] = bi.Size
		p.Garbage.add(kindBlob, bi.Size)
	}
	if listed == nil {
		var n int64
		return p.deps.Blobs.List(ctx, func(bi blob.Info) error {
			n++
			if n%1024 == 0 {
				p.opts.progress("list blobs", n, 0)
			}
			if !m.chunks.has(bi.ID) {
				classify(bi)
			}
			return nil
		})
	}
	l := <-listed
	if l.err != nil {
		return l.err
	}
	n := int64(l.ids.len())
	p.opts.progress("list blobs", n, n)
	for id := range l.ids.all() {
		if m.chunks.has(id) {
			continue
		}
		bi, err := p.deps.Blobs.Stat(ctx, id)
		if errors.Is(err, fs.ErrNotExist) {
			continue // deleted since it was listed
		}
		if err != nil {
			return fmt.Errorf("list blobs: %w", err)
		}
		classify(bi)
	}
	return nil
}

// batchSize bounds the objects one transaction deletes or condemns.
const batchSize = 512

// inBatches calls fn for consecutive slices of at most batchSize hashes.
func inBatches(hs []cas.Hash, fn func([]cas.Hash) error) error {
	for len(hs) > 0 {
		n := min(len(hs), batchSize)
		if err := fn(hs[:n]); err != nil {
			return err
		}
		hs = hs[n:]
	}
	return nil
}

// update runs fn in its own transaction.
func (p *Plan) update(ctx context.Context, fn func(tx meta.Tx) error) error {
	return p.deps.Meta.Update(ctx, fn)
}
