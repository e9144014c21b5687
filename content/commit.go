package content

import (
	"bytes"
	"context"
	"errors"
	"sort"

	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/chunk"
	"github.com/forkspace/forkspace/meta"
)

// layout describes a file to commit: its size, the base it was edited
// from, which ranges were written, and where its bytes come from.
type layout struct {
	size      int64
	base      Manifest
	baseLimit int64  // base bytes show through below this offset only
	dirty     []span // written ranges, sorted and disjoint
	src       source
	// baseCut says the base's last chunk ended at a decided boundary
	// (content-defined, or MaxSize): what chunking would cut there
	// whatever bytes follow, so it is reused like any other chunk.
	baseCut bool
	// baseHeld says the caller holds intents on the base's chunks (from
	// the CommitAhead that stored it): reusing them takes none.
	baseHeld bool
	// ahead commits only the chunks the bytes so far decide: the chunking
	// of the file's last data run stops where its boundary would depend
	// on bytes not yet written, and commit returns a manifest of the
	// prefix before that point (see Draft.CommitAhead).
	ahead bool
}

// source serves a file's bytes to the chunker.
type source interface {
	// view returns the bytes [off, off+n). The slice stays valid and
	// unchanged until the commit ends. The source may read ahead up to end.
	view(ctx context.Context, off, n, end int64) ([]byte, error)
	// reach returns how far past off+n, up to limit, view can serve at
	// no more chunk fetches than viewing [off, off+n) costs.
	reach(off, n, limit int64) int64
	// done ends the commit: no slice view returned is used again.
	done()
}

var (
	_ source = bytesSource(nil)
	_ source = (*draftSource)(nil)
)

// bytesSource serves a caller's buffer without copying.
type bytesSource []byte

func (b bytesSource) view(_ context.Context, off, n, _ int64) ([]byte, error) {
	return b[off : off+n], nil
}

func (b bytesSource) reach(_, _, limit int64) int64 { return limit }

func (b bytesSource) done() {}

// commit turns l into a manifest: inline when small, else holes, reused
// base chunks and new chunks put to the blob store.
func (s *Store) commit(ctx context.Context, l *layout) (Manifest, []meta.Object, Intents, error) {
	defer l.src.done()
	if l.size == 0 {
		return Manifest{}, nil, nil, nil
	}
	if l.size <= int64(s.opts.InlineMax) {
		v, err := l.src.view(ctx, 0, l.size, l.size)
		if err != nil {
			return Manifest{}, nil, nil, err
		}
		// One copy serves the metadata put and the cache: neither
		// changes it.
		data := bytes.Clone(v)
		h := cas.Sum(data)
		s.cache.add(h, data)
		m := Manifest{Size: l.size, Inline: true, Extents: []Extent{{Hash: h, Size: l.size}}}
		return m, []meta.Object{{Hash: h, Data: data}}, nil, nil
	}
	is := &intentSet{}
	exts, size, err := s.chunkFile(ctx, l, is)
	if err != nil {
		// Nothing will reference the chunks already put: release their
		// intents so the collector may take them.
		return Manifest{}, nil, nil, errors.Join(err, s.Release(context.WithoutCancel(ctx), is.ids))
	}
	return Manifest{Size: size, Extents: exts}, nil, is.ids, nil
}

// run is a range of the new file that is all hole or all data.
type run struct {
	off, end int64
	hole     bool
}

// runs splits the new file into data runs and holes. Holes are zero ranges
// nobody wrote: holes of the base and ranges past baseLimit. Holes shorter
// than minHole become zero bytes of the data around them.
func (l *layout) runs(minHole int64) []run {
	var holes []run
	addHole := func(lo, hi int64) {
		i := sort.Search(len(l.dirty), func(i int) bool { return l.dirty[i].end() > lo })
		for pos := lo; pos < hi; {
			next := hi
			if i < len(l.dirty) && l.dirty[i].off <= pos {
				pos = l.dirty[i].end()
				i++
				continue
			}
			if i < len(l.dirty) {
				next = min(next, l.dirty[i].off)
			}
			if n := len(holes); n > 0 && holes[n-1].end == pos {
				holes[n-1].end = next
			} else {
				holes = append(holes, run{off: pos, end: next, hole: true})
			}
			pos = next
		}
	}
	if !l.base.Inline {
		pos := int64(0)
		for _, e := range l.base.Extents {
			if e.Hash.IsZero() && pos < l.baseLimit {
				addHole(pos, min(pos+e.Size, l.baseLimit))
			}
			pos += e.Size
		}
	}
	addHole(l.baseLimit, l.size)

	var out []run
	pos := int64(0)
	for _, h := range holes {
		if h.end-h.off < minHole {
			continue
		}
		if h.off > pos {
			out = append(out, run{off: pos, end: h.off})
		}
		out = append(out, h)
		pos = h.end
	}
	if pos < l.size {
		out = append(out, run{off: pos, end: l.size})
	}
	return out
}

// baseChunk is a base chunk whose bytes the draft did not change.
type baseChunk struct {
	off       int64
	ext       Extent
	lastOfRun bool // followed by a hole or the end of the base
}

// cleanChunks lists the base chunks below baseLimit that no write touched.
func (l *layout) cleanChunks() []baseChunk {
	if l.base.Inline {
		return nil
	}
	var out []baseChunk
	pos := int64(0)
	exts := l.base.Extents
	for i, e := range exts {
		off := pos
		pos += e.Size
		if e.Hash.IsZero() || pos > l.baseLimit {
			continue
		}
		j := sort.Search(len(l.dirty), func(j int) bool { return l.dirty[j].end() > off })
		if j < len(l.dirty) && l.dirty[j].off < pos {
			continue
		}
		last := i == len(exts)-1 && !l.baseCut || i < len(exts)-1 && exts[i+1].Hash.IsZero()
		out = append(out, baseChunk{off: off, ext: e, lastOfRun: last})
	}
	return out
}

// chunkFile chunks the data runs of l, reusing clean base chunks wherever
// fresh chunking would produce them, and puts new chunks with putWorkers
// goroutines, each taking an upload intent on its chunk before putting it
// (in is), and an intent on the reused base chunks. It returns the file's
// extents and their total size: l.size, or less when l.ahead stopped early.
//
// A clean base chunk at the position where chunking stands is what
// chunking would cut there: its bytes are unchanged, and its end was
// either content-defined (it was not the last chunk of its run, so the cut
// depended on its bytes only) or is still the end of its run.
func (s *Store) chunkFile(ctx context.Context, l *layout, is *intentSet) ([]Extent, int64, error) {
	p := s.opts.Params
	clean := l.cleanChunks()
	pool := s.newPutPool(ctx, is)

	var exts []Extent
	var hashes []*cas.Hash // per extent: set by a worker, or nil
	size := l.size
	plan := func() error {
		ci := 0
		for _, r := range l.runs(int64(p.MinSize)) {
			if r.hole {
				exts = append(exts, Extent{Size: r.end - r.off})
				hashes = append(hashes, nil)
				continue
			}
			// A commit ahead does not decide the end of the last run:
			// bytes may follow it.
			final := !l.ahead || r.end < l.size
			for pos := r.off; pos < r.end; {
				for ci < len(clean) && clean[ci].off < pos {
					ci++
				}
				if ci < len(clean) && clean[ci].off == pos {
					c := clean[ci]
					if end := pos + c.ext.Size; end < r.end && !c.lastOfRun || end == r.end && final {
						exts = append(exts, c.ext)
						hashes = append(hashes, nil)
						pos = end
						continue
					}
				}
				// A failed put stops the chunking: pool.ctx.
				v, n, err := nextChunk(pool.ctx, l.src, p, pos, r.end, final)
				if err != nil {
					return err
				}
				if n == 0 {
					size = pos // the rest waits for more bytes
					return nil
				}
				h := new(cas.Hash)
				exts = append(exts, Extent{Size: int64(n)})
				hashes = append(hashes, h)
				if err := pool.add(putJob{data: v[:n], hash: h}); err != nil {
					return err
				}
				pos += int64(n)
			}
		}
		return nil
	}
	err := plan()
	if werr := pool.wait(); err == nil {
		err = werr
	}
	if err != nil {
		return nil, 0, err
	}
	for i, h := range hashes {
		if h != nil {
			exts[i].Hash = *h
		}
	}
	if !l.baseHeld {
		if err := s.holdReused(ctx, exts, hashes, is); err != nil {
			return nil, 0, err
		}
	}
	return exts, size, nil
}

// nextChunk cuts the chunk starting at pos of the data run ending at end.
// It first views what the source serves without fetching chunks, then
// grows the view one base chunk at a time until the cut is decided, so an
// edit re-reads as little of the base as it can. When final is false,
// bytes may follow end: a cut that would depend on them is not decided,
// and nextChunk returns n = 0.
func nextChunk(ctx context.Context, src source, p chunk.Params, pos, end int64, final bool) ([]byte, int, error) {
	limit := min(pos+int64(p.MaxSize), end)
	want := src.reach(pos, 0, limit) - pos
	if want <= int64(p.MinSize) {
		want = src.reach(pos, int64(p.MinSize)+1, limit) - pos
	}
	for {
		v, err := src.view(ctx, pos, want, end)
		if err != nil {
			return nil, 0, err
		}
		if n, ok := p.Next(v, final && pos+want == end); ok {
			return v, n, nil
		}
		if pos+want == end {
			return nil, 0, nil
		}
		want = src.reach(pos, want+1, limit) - pos
	}
}
