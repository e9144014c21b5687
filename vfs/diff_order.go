package vfs

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"strconv"
	"strings"

	"github.com/forkspace/forkspace/errdefs"
)

// Ordering the changes (the contract is on Diff). Every entry key that
// changed is a removed or added loc of an inode. Per inode, removed and
// added locs pair up as renames; the rest are deletions and additions. The
// steps that shape the tree (deletions, renames, new directories) are then
// ordered by simulating them: the state reached so far is from plus the
// entries the emitted steps changed, and a step is emitted once it can
// apply there. The remaining steps (new files, links, modifications) come
// last, when the tree has its final shape.

// ekey is a directory entry's key: parent directory and name.
type ekey struct {
	parent uint64
	name   string
}

func (l loc) key() ekey { return ekey{l.parent, l.name} }

// step is a deletion, rename or addition not emitted yet.
type step struct {
	op       Op
	ino      uint64
	src, dst loc // src: Deleted and Renamed; dst: Renamed and Added
	parked   bool
}

// sim is the state reached by the steps emitted so far.
type sim struct {
	d        *differ
	from     map[ekey]uint64 // the inode each changed key held in from
	occ      map[ekey]uint64 // keys the emitted steps changed (0: free)
	dirs     map[uint64]ekey // directories the emitted steps moved or made
	unplaced map[uint64]bool // directories with a rename or addition to come
	sources  map[uint64]int  // steps to come that take an entry out of a directory
	out      []Change
}

// changes returns the ordered steps.
func (d *differ) changes(ctx context.Context) ([]Change, error) {
	s := &sim{d: d, from: map[ekey]uint64{}, occ: map[ekey]uint64{}, dirs: map[uint64]ekey{}, unplaced: map[uint64]bool{}, sources: map[uint64]int{}}
	var shape, adds []*step
	for ino, olds := range d.removed {
		for _, l := range olds {
			s.from[l.key()] = ino
		}
	}
	for _, ino := range sortedInos(d.removed, d.added) {
		olds, news := sortLocs(d.removed[ino]), sortLocs(d.added[ino])
		n := min(len(olds), len(news))
		for i := range n {
			shape = append(shape, &step{op: Renamed, ino: ino, src: olds[i], dst: news[i]})
		}
		for _, l := range olds[n:] {
			shape = append(shape, &step{op: Deleted, ino: ino, src: l})
		}
		for _, l := range news[n:] {
			st := &step{op: Added, ino: ino, dst: l}
			if l.typ == typeDir {
				shape = append(shape, st)
			} else {
				adds = append(adds, st)
			}
		}
	}
	// A new file or symbolic link where one of the same type was deleted
	// is a replacement: Modified, not Deleted and Added.
	replaced := map[ekey]*step{}
	for _, st := range shape {
		if st.op == Deleted && st.src.typ != typeDir {
			replaced[st.src.key()] = st
		}
	}
	replacing, absorbed := map[*step]*step{}, map[*step]bool{} // addition → the deletion it absorbs
	for _, st := range adds {
		if del, ok := replaced[st.dst.key()]; ok && del.src.typ == st.dst.typ {
			replacing[st], absorbed[del] = del, true
		}
	}
	shape = slices.DeleteFunc(shape, func(st *step) bool { return absorbed[st] })
	for _, st := range shape {
		if st.op != Deleted && st.dst.typ == typeDir {
			s.unplaced[st.ino] = true
		}
		if st.op != Added {
			s.sources[st.src.parent]++
		}
	}
	if err := s.run(ctx, shape); err != nil {
		return nil, err
	}
	last, err := d.lastSteps(ctx, adds, replacing)
	if err != nil {
		return nil, err
	}
	return append(s.out, last...), nil
}

func sortedInos(ms ...map[uint64][]loc) []uint64 {
	var inos []uint64
	for _, m := range ms {
		for ino := range m {
			inos = append(inos, ino)
		}
	}
	slices.Sort(inos)
	return slices.Compact(inos)
}

func sortLocs(ls []loc) []loc {
	return slices.SortedFunc(slices.Values(ls), func(a, b loc) int {
		return cmp.Or(cmp.Compare(a.parent, b.parent), strings.Compare(a.name, b.name))
	})
}

// run emits the steps that shape the tree: in passes, every step that can
// apply; when none can, one rename goes to a temporary name first.
func (s *sim) run(ctx context.Context, steps []*step) error {
	// Deletions deepest first, then renames and additions by their path
	// in to, so that most steps apply in the first pass.
	keys := map[*step]string{}
	for _, st := range steps {
		var err error
		if st.op == Deleted {
			keys[st], err = s.d.from.path(ctx, st.src)
		} else {
			keys[st], err = s.d.to.path(ctx, st.dst)
		}
		if err != nil {
			return err
		}
	}
	slices.SortStableFunc(steps, func(a, b *step) int {
		switch {
		case a.op == Deleted && b.op != Deleted:
			return -1
		case a.op != Deleted && b.op == Deleted:
			return 1
		case a.op == Deleted:
			return strings.Compare(keys[b], keys[a])
		}
		return strings.Compare(keys[a], keys[b])
	})
	for len(steps) > 0 {
		progress := false
		var rest []*step
		for _, st := range steps {
			ok, err := s.try(ctx, st)
			if err != nil {
				return err
			}
			if ok {
				progress = true
			} else {
				rest = append(rest, st)
			}
		}
		steps = rest
		if !progress && len(steps) > 0 {
			if err := s.park(ctx, steps); err != nil {
				return err
			}
		}
	}
	return nil
}

// try emits st if it can apply to the state reached so far.
func (s *sim) try(ctx context.Context, st *step) (bool, error) {
	if st.op == Deleted {
		if st.src.typ == typeDir && s.sources[st.ino] > 0 {
			return false, nil
		}
		p, err := s.path(ctx, st.src.key())
		if err != nil {
			return false, err
		}
		old, err := s.d.from.path(ctx, st.src)
		if err != nil {
			return false, err
		}
		s.take(st.src)
		s.out = append(s.out, Change{Op: Deleted, Path: p, Type: st.src.typ.String(), OldSize: s.d.size(ctx, &s.d.from, st.ino), oldIno: st.ino, oldLabel: old})
		return true, nil
	}
	if s.occupant(st.dst.key()) != 0 {
		return false, nil
	}
	placed, err := s.placed(ctx, st.dst.parent)
	if err != nil || !placed {
		return false, err
	}
	p, err := s.path(ctx, st.dst.key())
	if err != nil {
		return false, err
	}
	c := Change{Op: st.op, Path: p, Type: st.dst.typ.String(), Size: s.d.size(ctx, &s.d.to, st.ino), newIno: st.ino, oldLabel: p}
	if st.op == Renamed {
		if c.OldPath, err = s.path(ctx, st.src.key()); err != nil {
			return false, err
		}
		c.OldSize, c.oldIno = s.d.size(ctx, &s.d.from, st.ino), st.ino
		s.take(st.src)
	}
	s.put(st.dst, st.ino)
	delete(s.unplaced, st.ino)
	s.out = append(s.out, c)
	return true, nil
}

// take removes entry l from the state.
func (s *sim) take(l loc) {
	s.occ[l.key()] = 0
	s.sources[l.parent]--
}

// put makes entry l name ino.
func (s *sim) put(l loc, ino uint64) {
	s.occ[l.key()] = ino
	if l.typ == typeDir {
		s.dirs[ino] = l.key()
	}
}

// park renames a rename's source to a temporary name at the root, which
// frees its place (cycles are broken by this). It prefers a source that
// another step is waiting for.
func (s *sim) park(ctx context.Context, steps []*step) error {
	wanted := map[ekey]bool{}
	for _, st := range steps {
		if st.op != Deleted {
			wanted[st.dst.key()] = true
		}
	}
	var pick *step
	for _, st := range steps {
		if st.op == Renamed && !st.parked && (pick == nil || wanted[st.src.key()] && !wanted[pick.src.key()]) {
			pick = st
		}
	}
	if pick == nil {
		return fmt.Errorf("%w: diff steps cannot be ordered", errdefs.ErrCorrupt)
	}
	name, err := s.tempName(ctx, pick.ino)
	if err != nil {
		return err
	}
	old, err := s.path(ctx, pick.src.key())
	if err != nil {
		return err
	}
	tmp := loc{parent: rootIno, name: name, typ: pick.src.typ}
	s.take(pick.src)
	s.put(tmp, pick.ino)
	s.sources[rootIno]++
	pick.src, pick.parked = tmp, true
	size := s.d.size(ctx, &s.d.from, pick.ino)
	s.out = append(s.out, Change{Op: Renamed, Path: name, OldPath: old, Type: tmp.typ.String(), Size: size, OldSize: size})
	return nil
}

// tempName returns a root entry name free in from, in to and so far.
func (s *sim) tempName(ctx context.Context, ino uint64) (string, error) {
	for i := 0; ; i++ {
		name := ".forkspace-move-" + strconv.FormatUint(ino, 10)
		if i > 0 {
			name += "-" + strconv.Itoa(i)
		}
		if _, ok := s.occ[ekey{rootIno, name}]; ok {
			continue
		}
		_, inFrom, err := s.d.from.t.entry(ctx, rootIno, name)
		if err != nil {
			return "", err
		}
		_, inTo, err := s.d.to.t.entry(ctx, rootIno, name)
		if err != nil {
			return "", err
		}
		if !inFrom && !inTo {
			return name, nil
		}
	}
}

// occupant returns the inode entry k names so far (0 for none), for keys
// that changed between the states.
func (s *sim) occupant(k ekey) uint64 {
	if ino, ok := s.occ[k]; ok {
		return ino
	}
	return s.from[k]
}

// parent returns the entry of directory dir so far.
func (s *sim) parent(ctx context.Context, dir uint64) (ekey, error) {
	if k, ok := s.dirs[dir]; ok {
		return k, nil
	}
	a, err := s.d.from.t.attr(ctx, dir)
	return ekey{a.parent, a.name}, err
}

// placed reports whether directory dir and all above it are where they
// are in to.
func (s *sim) placed(ctx context.Context, dir uint64) (bool, error) {
	for range MaxPathLen {
		if dir == rootIno {
			return true, nil
		}
		if s.unplaced[dir] {
			return false, nil
		}
		k, err := s.parent(ctx, dir)
		if err != nil {
			return false, err
		}
		dir = k.parent
	}
	return false, fmt.Errorf("%w: directory %d is not below the root", errdefs.ErrCorrupt, dir)
}

// path returns the path of entry k so far.
func (s *sim) path(ctx context.Context, k ekey) (string, error) {
	names := []string{k.name}
	for dir := k.parent; dir != rootIno; {
		if len(names) > MaxPathLen {
			return "", fmt.Errorf("%w: directory %d is not below the root", errdefs.ErrCorrupt, k.parent)
		}
		pk, err := s.parent(ctx, dir)
		if err != nil {
			return "", err
		}
		names = append(names, pk.name)
		dir = pk.parent
	}
	slices.Reverse(names)
	return strings.Join(names, "/"), nil
}

// lastSteps returns the additions of files, symbolic links and hard links
// and the modifications, by path in to.
func (d *differ) lastSteps(ctx context.Context, adds []*step, replacing map[*step]*step) ([]Change, error) {
	var out []Change
	addedAt := map[uint64]map[string]bool{} // ino → paths the additions create
	for _, st := range adds {
		p, err := d.to.path(ctx, st.dst)
		if err != nil {
			return nil, err
		}
		c := Change{Op: Added, Path: p, Type: st.dst.typ.String(), Size: d.size(ctx, &d.to, st.ino), newIno: st.ino, oldLabel: p}
		if del, ok := replacing[st]; ok {
			c.Op, c.Replaced, c.OldSize, c.oldIno = Modified, true, d.size(ctx, &d.from, del.ino), del.ino
		}
		if addedAt[st.ino] == nil {
			addedAt[st.ino] = map[string]bool{}
		}
		addedAt[st.ino][p] = true
		out = append(out, c)
	}
	for ino := range d.touched {
		c, ok, err := d.modified(ctx, ino)
		if err != nil {
			return nil, err
		}
		if !ok {
			continue
		}
		paths, err := d.to.linkPaths(ctx, ino, c.Path)
		if err != nil {
			return nil, err
		}
		for _, p := range paths {
			if !addedAt[ino][p] {
				c.Path = p
				out = append(out, c)
			}
		}
	}
	slices.SortFunc(out, func(a, b Change) int { return strings.Compare(a.Path, b.Path) })
	// Hard links: an addition of a file present elsewhere links to it.
	first := map[uint64]string{}
	for i := range out {
		c := &out[i]
		if c.Op == Modified && !c.Replaced {
			continue
		}
		if p, ok := first[c.newIno]; ok {
			c.Link = p
			continue
		}
		first[c.newIno] = c.Path
		if _, err := d.from.t.attr(ctx, c.newIno); errors.Is(err, fs.ErrNotExist) {
			continue // a new inode: this step creates it
		} else if err != nil {
			return nil, err
		}
		a, err := d.to.t.attr(ctx, c.newIno)
		if err != nil {
			return nil, err
		}
		primary, err := d.to.path(ctx, loc{parent: a.parent, name: a.name})
		if err != nil {
			return nil, err
		}
		paths, err := d.to.linkPaths(ctx, c.newIno, primary)
		if err != nil {
			return nil, err
		}
		slices.Sort(paths)
		for _, p := range paths {
			if !addedAt[c.newIno][p] {
				c.Link, first[c.newIno] = p, p
				break
			}
		}
	}
	return out, nil
}
