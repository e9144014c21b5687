package merge

import (
	"path"
	"strings"

	"github.com/forkspace/forkspace/vfs"
)

// Side is one side of a three-way merge: the script of changes from the
// base to that side (vfs.Diff), read as where each base entry went.
type Side struct {
	// Steps is the script, each step with the base path of the entry it
	// acts on.
	Steps   []Step
	moves   map[string]string // base path → side path of explicitly moved entries
	back    map[string]string // side path → base path of the same
	deleted map[string]bool   // base paths deleted
	added   map[string]bool   // side paths of new entries
}

// Step is a change of the script with the base path of the entry it acts
// on ("" for a new entry).
type Step struct {
	vfs.Change
	Base string
}

// NewSide reads a script (vfs.Diff from the base to the side, in its
// order): it replays the renames to know, for every step, which base
// entry it acts on, and for every base path where it ends.
func NewSide(changes []vfs.Change) *Side {
	s := &Side{moves: map[string]string{}, back: map[string]string{}, deleted: map[string]bool{}, added: map[string]bool{}}
	cur := map[string]string{} // current path → base path of moved entries
	fresh := map[string]bool{} // current paths of new entries
	for _, c := range changes {
		st := Step{Change: c}
		switch c.Op {
		case vfs.Deleted:
			st.Base = resolve(cur, fresh, c.Path)
			if st.Base != "" {
				s.deleted[st.Base] = true
			}
			drop(cur, c.Path)
			drop(fresh, c.Path)
		case vfs.Renamed:
			st.Base = resolve(cur, fresh, c.OldPath)
			rekey(cur, c.OldPath, c.Path)
			rekey(fresh, c.OldPath, c.Path)
			if st.Base != "" {
				cur[c.Path] = st.Base
			}
		case vfs.Added:
			fresh[c.Path] = true
		case vfs.Modified:
			st.Base = resolve(cur, fresh, c.Path)
		}
		s.Steps = append(s.Steps, st)
	}
	for p, b := range cur {
		s.back[p] = b // moved, if only away and back: not new
		if p != b {
			s.moves[b] = p
		}
	}
	for p := range fresh {
		s.added[p] = true
	}
	return s
}

// resolve returns the base path of the entry at current path p ("" for a
// new one).
func resolve[V any](cur map[string]string, fresh map[string]V, p string) string {
	for q := p; ; q = parent(q) {
		if b, ok := cur[q]; ok {
			return b + p[len(q):]
		}
		if _, ok := fresh[q]; ok {
			return ""
		}
		if q == "" || q == "." {
			return p
		}
	}
}

// drop removes the keys at p and under it.
func drop[V any](m map[string]V, p string) {
	for k := range m {
		if Under(k, p) {
			delete(m, k)
		}
	}
}

// rekey moves the keys at from and under it to to.
func rekey[V any](m map[string]V, from, to string) {
	moved := map[string]V{}
	for k, v := range m {
		if Under(k, from) {
			moved[to+k[len(from):]] = v
			delete(m, k)
		}
	}
	for k, v := range moved {
		m[k] = v
	}
}

// Under reports whether path p is q or below it.
func Under(p, q string) bool {
	return p == q || strings.HasPrefix(p, q+"/")
}

// parent returns the directory of p ("" at the top).
func parent(p string) string {
	d := path.Dir(p)
	if d == "." || d == "/" {
		return ""
	}
	return d
}

// Where returns the side's path of base path b, and false if the side
// deleted it.
func (s *Side) Where(b string) (string, bool) {
	if s.deleted[b] {
		return "", false
	}
	return mapPrefix(s.moves, b), true
}

// Moved returns the side's path of base path b if the side renamed that
// very entry (not one of its directories).
func (s *Side) Moved(b string) (string, bool) {
	p, ok := s.moves[b]
	return p, ok
}

// Deleted reports whether the side deleted base path b.
func (s *Side) Deleted(b string) bool { return s.deleted[b] }

// Base returns the base path of side path p, and false if p is new on
// the side (added, or beneath a new directory).
func (s *Side) Base(p string) (string, bool) {
	for q := p; ; q = parent(q) {
		if b, ok := s.back[q]; ok {
			return b + p[len(q):], true
		}
		if s.added[q] {
			return "", false
		}
		if q == "" || q == "." {
			return p, true
		}
	}
}

// mapPrefix maps p through the longest key of m that is p or one of its
// directories.
func mapPrefix(m map[string]string, p string) string {
	for q := p; ; q = parent(q) {
		if to, ok := m[q]; ok {
			return to + p[len(q):]
		}
		if q == "" || q == "." {
			return p
		}
	}
}

// Paths maps paths of the base and of theirs into the merged state a
// merge builds on ours: ours' renames apply, and so do theirs' as the
// merge carries them out (Moved).
type Paths struct {
	ours, theirs *Side
	applied      map[string]string // base path → merged path of entries the merge moved
}

// NewPaths starts the mapping with ours' renames.
func NewPaths(ours, theirs *Side) *Paths {
	return &Paths{ours: ours, theirs: theirs, applied: map[string]string{}}
}

// Moved records that the merge moved the entry of base path b to merged
// path to.
func (m *Paths) Moved(b, to string) { m.applied[b] = to }

// Merged returns the merged path of base path b, and false if ours
// deleted it.
func (m *Paths) Merged(b string) (string, bool) {
	if _, ok := m.applied[b]; !ok && m.ours.Deleted(b) {
		return "", false
	}
	for q := b; ; q = parent(q) {
		if to, ok := m.applied[q]; ok {
			return to + b[len(q):], true
		}
		if to, ok := m.ours.Moved(q); ok {
			return m.follow(to + b[len(q):]), true
		}
		if q == "" {
			return b, true
		}
	}
}

// follow maps r, a path in ours, through the moves the merge made of
// entries above it: ours moved an entry under a directory theirs moved.
func (m *Paths) follow(r string) string {
	best, bestTo := "", ""
	for ab, to := range m.applied {
		oa, ok := m.oursPath(ab)
		if ok && Under(r, oa) && len(oa) > len(best) {
			best, bestTo = oa, to
		}
	}
	if best == "" {
		return r
	}
	return bestTo + r[len(best):]
}

// Ours returns where what is at merged path p was in ours before the
// merge: p with the merge's own moves (Moved) of entries at or above it
// undone.
func (m *Paths) Ours(p string) string {
	best, bestB := "", ""
	for b, to := range m.applied {
		if Under(p, to) && len(to) > len(best) {
			best, bestB = to, b
		}
	}
	if best == "" {
		return p
	}
	o, ok := m.oursPath(bestB)
	if !ok {
		return p
	}
	return o + p[len(best):]
}

// oursPath returns where base path b is in ours, and false if ours
// deleted it.
func (m *Paths) oursPath(b string) (string, bool) {
	if m.ours.Deleted(b) {
		return "", false
	}
	for q := b; ; q = parent(q) {
		if to, ok := m.ours.Moved(q); ok {
			return to + b[len(q):], true
		}
		if q == "" {
			return b, true
		}
	}
}

// Dest returns the merged path where theirs' path p belongs: an entry
// theirs had in the base goes where the base entry is now; a new one goes
// into the merged place of its directory. False if ours deleted that.
func (m *Paths) Dest(p string) (string, bool) {
	if p == "" || p == "." {
		return p, true
	}
	if b, ok := m.theirs.Base(p); ok {
		return m.Merged(b)
	}
	dir, ok := m.Dest(parent(p))
	if !ok {
		return "", false
	}
	return join(dir, path.Base(p)), true
}

func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// Target returns the merged path where theirs' entry at p is to be put
// (for a rename or an addition): p's name in the merged place of its
// directory. False if ours deleted that directory.
func (m *Paths) Target(p string) (string, bool) {
	dir, ok := m.Dest(parent(p))
	if !ok {
		return "", false
	}
	return join(dir, path.Base(p)), true
}
