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
	// the grace period or used by a recent upload intent.
	Young Counts `json:"young"`
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

	p.Nodes = p.sortObjects(kindNode, s.nodes, m.nodes)
	p.Bodies = p.sortObjects(kindBody, s.bodies, m.bodies)
	if err := p.listBlobs(ctx, s, m); err != nil {
		return nil, fmt.Errorf("plan collection: %w", err)
	}
	return p, nil
}

// sortObjects sorts the stored objects of kind k that marked lacks into
// garbage (touched before the cutoff, returned) and young.
func (p *Plan) sortObjects(k kind, stored []meta.ObjectInfo, marked map[cas.Hash]int64) []cas.Hash {
	var garbage []cas.Hash
	for _, oi := range stored {
		if _, ok := marked[oi.Hash]; ok {
			continue
		}
		if oi.TouchedAt.Before(p.Cutoff) {
			garbage = append(garbage, oi.Hash)
			p.Garbage.add(k, oi.Size)
		} else {
			p.Young.add(k, oi.Size)
		}
	}
	return garbage
}

// listBlobs sorts the stored blobs the roots do not reach into garbage and
// young. A blob of a pending intent is a root; one with an intent created
// since the cutoff was used recently. A store that lists addresses alone
// (blob.IDLister) is asked the size and time of the unreached blobs only.
func (p *Plan) listBlobs(ctx context.Context, s *snapshot, m *marker) error {
	held := map[cas.Hash]bool{}
	for _, in := range s.intents {
		if !in.Released || !in.CreatedAt.Before(p.Cutoff) {
			held[in.Hash] = true
		}
	}
	var n int64
	listed := func() {
		n++
		if n%1024 == 0 {
			p.opts.progress("list blobs", n, 0)
		}
	}
	classify := func(bi blob.Info) {
		if held[bi.ID] || !bi.ModTime.Before(p.Cutoff) {
			p.Young.add(kindBlob, bi.Size)
			return
		}
		p.Blobs = append(p.Blobs, bi.ID)
		p.sizes[bi.ID] = bi.Size
		p.Garbage.add(kindBlob, bi.Size)
	}
	ids, ok := p.deps.Blobs.(blob.IDLister)
	if !ok {
		return p.deps.Blobs.List(ctx, func(bi blob.Info) error {
			listed()
			if _, ok := m.chunks[bi.ID]; !ok {
				classify(bi)
			}
			return nil
		})
	}
	var unreached []cas.Hash
	err := ids.ListIDs(ctx, func(id cas.Hash) error {
		listed()
		if _, ok := m.chunks[id]; !ok {
			unreached = append(unreached, id)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, id := range unreached {
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
