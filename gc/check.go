package gc

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strings"

	"github.com/forkspace/forkspace/blob"
	"github.com/forkspace/forkspace/cas"
	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/meta"
)

// Problem is one damaged reachable object.
type Problem struct {
	// Kind is "node", "body", "blob" or "manifest" ("metadata", with no
	// hash, for damage the metadata driver finds in its own storage).
	Kind string `json:"kind"`
	Hash string `json:"hash"`
	// Missing is set when the object is absent (a dangling reference);
	// otherwise its bytes do not match its address or do not decode.
	Missing bool   `json:"missing"`
	Error   string `json:"error"`
	// Files names files a damaged body or blob breaks ("workspace:/path",
	// as the first workspace walked has it; at most 10).
	Files []string `json:"files,omitempty"`
}

// CheckReport is the result of Check.
type CheckReport struct {
	// Checked counts the reachable objects read and verified.
	Checked Counts `json:"checked"`
	// Problems lists the damaged or missing reachable objects.
	Problems []Problem `json:"problems"`
	// Orphans counts stored objects no root reaches (garbage, not
	// damage).
	Orphans Counts `json:"orphans"`
}

// Clean reports whether no problem was found.
func (r *CheckReport) Clean() bool { return len(r.Problems) == 0 }

// Check verifies that every reachable node, inline body and blob exists
// and hashes to its address (blobs are read whole), and counts orphans.
// Damage is reported in the CheckReport, not as an error; the error is
// for failures to run the check (I/O, cancellation). Run it while no
// collection executes (Options.Lock covers the root read only).
func Check(ctx context.Context, d Deps, o Options) (*CheckReport, error) {
	o = o.withDefaults()
	s, err := readSnapshot(ctx, d, o, true)
	if err != nil {
		return nil, fmt.Errorf("check store: %w", err)
	}
	r := &CheckReport{Problems: []Problem{}}
	files := newFileIndex()
	report := func(kind string, h cas.Hash, err error) error {
		if !errors.Is(err, errdefs.ErrCorrupt) && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
		p := Problem{Kind: kind, Hash: h.String(), Missing: errors.Is(err, fs.ErrNotExist), Error: err.Error()}
		if kind == "blob" || kind == "body" { // reported after the walk: files is complete
			p.Files = files.files(h)
		}
		r.Problems = append(r.Problems, p)
		return nil
	}
	m := newMarker(d.KV)
	m.failed = report
	m.files = files
	if err := m.owners(ctx, s, o); err != nil {
		return nil, fmt.Errorf("check store: %w", err)
	}
	for _, size := range m.nodes {
		if size > 0 { // read and verified
			r.Checked.add(kindNode, size)
		}
	}
	if err := checkBodies(ctx, d, o, m, r, report); err != nil {
		return nil, fmt.Errorf("check store: %w", err)
	}
	if err := checkBlobs(ctx, d, o, m, r, report); err != nil {
		return nil, fmt.Errorf("check store: %w", err)
	}
	for _, t := range []struct {
		k      kind
		stored []meta.ObjectInfo
		marked map[cas.Hash]int64
	}{{kindNode, s.nodes, m.nodes}, {kindBody, s.bodies, m.bodies}} {
		for _, oi := range t.stored {
			if _, ok := t.marked[oi.Hash]; !ok {
				r.Orphans.add(t.k, oi.Size)
			}
		}
	}
	err = d.Blobs.List(ctx, func(bi blob.Info) error {
		if !m.chunks.has(bi.ID) {
			r.Orphans.add(kindBlob, bi.Size)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("check store: %w", err)
	}
	slices.SortFunc(r.Problems, func(a, b Problem) int {
		if a.Kind != b.Kind {
			return strings.Compare(a.Kind, b.Kind)
		}
		return strings.Compare(a.Hash, b.Hash)
	})
	return r, nil
}

func checkBodies(ctx context.Context, d Deps, o Options, m *marker, r *CheckReport, report func(string, cas.Hash, error) error) error {
	var n int64
	for h := range m.bodies {
		n++
		o.progress("check bodies", n, int64(len(m.bodies)))
		b, err := d.Meta.GetInline(ctx, h)
		if err == nil && !cas.Verify(h, b) {
			err = fmt.Errorf("inline body %s: %w: content does not match its hash", h.Short(), errdefs.ErrCorrupt)
		}
		if err != nil {
			if err := report("body", h, err); err != nil {
				return err
			}
			continue
		}
		r.Checked.add(kindBody, int64(len(b)))
	}
	return nil
}

func checkBlobs(ctx context.Context, d Deps, o Options, m *marker, r *CheckReport, report func(string, cas.Hash, error) error) error {
	var n int64
	for _, c := range m.chunks.refs {
		n++
		o.progress("check blobs", n, int64(m.chunks.len()))
		b, err := d.Blobs.Get(ctx, c.hash, 0, -1)
		if err == nil && int64(len(b)) != c.size {
			err = fmt.Errorf("blob %s: %w: %d bytes, manifest says %d", c.hash.Short(), errdefs.ErrCorrupt, len(b), c.size)
		}
		if err != nil {
			if err := report("blob", c.hash, err); err != nil {
				return err
			}
			continue
		}
		r.Checked.add(kindBlob, int64(len(b)))
	}
	return nil
}
