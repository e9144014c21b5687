package vfs

import (
	"bytes"
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/forkspace/forkspace/internal/textdiff"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/kv"
)

// Op is the kind of a Change.
type Op uint8

// Change kinds.
const (
	Added Op = iota + 1
	Modified
	Deleted
	Renamed
)

// String returns "added", "modified", "deleted" or "renamed".
func (o Op) String() string {
	switch o {
	case Added:
		return "added"
	case Modified:
		return "modified"
	case Deleted:
		return "deleted"
	case Renamed:
		return "renamed"
	}
	return fmt.Sprintf("op(%d)", uint8(o))
}

// MarshalText encodes o as its String form.
func (o Op) MarshalText() ([]byte, error) { return []byte(o.String()), nil }

// Change is one path-level difference between two filesystem states.
type Change struct {
	Op   Op     `json:"op"`
	Path string `json:"path"`
	// OldPath is the path in the old state of a Renamed entry.
	OldPath string `json:"old_path,omitempty"`
	// Type is "file", "dir" or "symlink" (the new type; the old one for
	// Deleted).
	Type    string `json:"type"`
	Size    int64  `json:"size"`
	OldSize int64  `json:"old_size"`
	// Unified is a unified diff of the contents, set when DiffOptions.Unified
	// is and both sides are text (no NUL byte, at most MaxDiffText bytes).
	Unified string `json:"unified,omitempty"`

	oldIno, newIno uint64 // the inodes on each side (0 for none)
}

// DiffOptions configure Diff.
type DiffOptions struct {
	// Unified adds unified diffs of text contents to changed files.
	Unified bool
}

// MaxDiffText is the largest file Diff renders as a unified diff.
const MaxDiffText = 1 << 20

// Diff returns the changes that turn state from into state to, sorted by
// path. Live states are folded first (Root). It walks only the parts of the
// two trees that differ, so its work is proportional to the change, then
// maps key changes to paths: a moved entry (a directory with everything
// beneath it, too) is one Renamed change; a new directory reports itself
// and each entry in it; a file whose contents, size, mode, owner, mtime,
// target or extended attributes changed is Modified; a directory is
// Modified only when its mode, owner or extended attributes changed. A path
// deleted and re-created as another inode is Modified. A file with several
// hard links is reported at its primary link. Both states must come from
// the same store.
func Diff(ctx context.Context, from, to *FS, opts DiffOptions) ([]Change, error) {
	a, err := from.Root(ctx)
	if err != nil {
		return nil, fmt.Errorf("diff: %w", err)
	}
	b, err := to.Root(ctx)
	if err != nil {
		return nil, fmt.Errorf("diff: %w", err)
	}
	d := differ{
		from:    side{fs: from, t: txn{view: kv.View{Store: from.d.KV, Root: a}}, paths: map[uint64]string{rootIno: ""}},
		to:      side{fs: to, t: txn{view: kv.View{Store: to.d.KV, Root: b}}, paths: map[uint64]string{rootIno: ""}},
		removed: map[uint64][]loc{},
		added:   map[uint64][]loc{},
		touched: map[uint64]bool{},
	}
	if err := from.d.KV.Diff(ctx, a, b, d.key); err != nil {
		return nil, fmt.Errorf("diff: %w", err)
	}
	changes, err := d.changes(ctx)
	if err != nil {
		return nil, fmt.Errorf("diff: %w", err)
	}
	if opts.Unified {
		for i := range changes {
			if err := d.unified(ctx, &changes[i]); err != nil {
				return nil, fmt.Errorf("diff %s: %w", changes[i].Path, err)
			}
		}
	}
	return changes, nil
}

// loc is a directory entry.
type loc struct {
	parent uint64
	name   string
	typ    fileType
}

// side is one state of a diff with a cache of directory paths.
type side struct {
	fs    *FS
	t     txn
	paths map[uint64]string // directory ino → path ("" for the root)
}

// dirPath returns the path of directory ino, walking primary links.
func (s *side) dirPath(ctx context.Context, ino uint64) (string, error) {
	if p, ok := s.paths[ino]; ok {
		return p, nil
	}
	a, err := s.t.attr(ctx, ino)
	if err != nil {
		return "", err
	}
	pp, err := s.dirPath(ctx, a.parent)
	if err != nil {
		return "", err
	}
	p := join(pp, a.name)
	s.paths[ino] = p
	return p, nil
}

func (s *side) path(ctx context.Context, l loc) (string, error) {
	dir, err := s.dirPath(ctx, l.parent)
	return join(dir, l.name), err
}

// linkPaths returns the paths of inode ino in s: its primary path and those
// of its secondary links (backlink records).
func (s *side) linkPaths(ctx context.Context, ino uint64, primary string) ([]string, error) {
	paths := []string{primary}
	start, end := inoRange(ino, kindBacklink)
	err := s.t.view.Scan(ctx, start, end, func(k, _ []byte) error {
		dir, name, ok := parseBacklink(k)
		if !ok {
			return fmt.Errorf("link record of inode %d: %w", ino, errdefs.ErrCorrupt)
		}
		p, err := s.path(ctx, loc{parent: dir, name: name})
		paths = append(paths, p)
		return err
	})
	return paths, err
}

func join(dir, name string) string {
	if dir == "" {
		return name
	}
	return dir + "/" + name
}

// differ turns key changes into path changes.
type differ struct {
	from, to side
	removed  map[uint64][]loc // ino → entries that no longer name it
	added    map[uint64][]loc // ino → entries that newly name it
	touched  map[uint64]bool  // inodes whose own records changed
}

// key records one key change.
func (d *differ) key(c kv.Change) error {
	pk, ok := parseKey(c.Key)
	if !ok {
		return nil // usage
	}
	if pk.kind != kindDirent {
		d.touched[pk.ino] = true
		return nil
	}
	if c.Old != nil {
		e, err := decodeDirent(c.Old)
		if err != nil {
			return err
		}
		d.removed[e.ino] = append(d.removed[e.ino], loc{pk.ino, pk.name, e.typ})
	}
	if c.New != nil {
		e, err := decodeDirent(c.New)
		if err != nil {
			return err
		}
		d.added[e.ino] = append(d.added[e.ino], loc{pk.ino, pk.name, e.typ})
	}
	return nil
}

// changes builds the sorted, merged change list.
func (d *differ) changes(ctx context.Context) ([]Change, error) {
	byPath := map[string]*Change{}
	put := func(c Change) {
		old, ok := byPath[c.Path]
		switch {
		case !ok:
		case old.Op == Deleted && c.Op == Added:
			// Another inode now holds the path.
			c.Op, c.OldSize, c.oldIno = Modified, old.OldSize, old.oldIno
		case old.Op == Added && c.Op == Deleted:
			old.Op, old.OldSize, old.oldIno = Modified, c.OldSize, c.oldIno
			return
		case c.Op == Deleted:
			return // replaced by a rename onto this path
		}
		byPath[c.Path] = &c
	}
	for ino, news := range d.added {
		olds := d.removed[ino]
		for i, l := range news {
			p, err := d.to.path(ctx, l)
			if err != nil {
				return nil, err
			}
			c := Change{Op: Added, Path: p, Type: l.typ.String(), Size: d.size(ctx, &d.to, ino), newIno: ino}
			if i < len(olds) {
				if c.OldPath, err = d.from.path(ctx, olds[i]); err != nil {
					return nil, err
				}
				c.Op, c.OldSize, c.oldIno = Renamed, d.size(ctx, &d.from, ino), ino
			}
			put(c)
		}
	}
	for ino, olds := range d.removed {
		for _, l := range olds[min(len(olds), len(d.added[ino])):] {
			p, err := d.from.path(ctx, l)
			if err != nil {
				return nil, err
			}
			put(Change{Op: Deleted, Path: p, Type: l.typ.String(), OldSize: d.size(ctx, &d.from, ino), oldIno: ino})
		}
	}
	for ino := range d.touched {
		// A modified inode is reported at each of its links that is not
		// already reported as added or renamed: a hard link added elsewhere
		// (even one that became the primary link) does not hide the
		// modification of the links that were there before.
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
			if _, dup := byPath[p]; !dup {
				c.Path = p
				put(c)
			}
		}
	}
	out := make([]Change, 0, len(byPath))
	for _, c := range byPath {
		out = append(out, *c)
	}
	slices.SortFunc(out, func(a, b Change) int { return cmp.Compare(a.Path, b.Path) })
	return out, nil
}

// size returns the size of ino in s, or 0 for a directory or missing inode.
func (d *differ) size(ctx context.Context, s *side, ino uint64) int64 {
	a, err := s.t.attr(ctx, ino)
	if err != nil || a.typ == typeDir {
		return 0
	}
	return a.size
}

// modified reports whether ino, present in both states under the same
// entries, changed in a way Diff reports.
func (d *differ) modified(ctx context.Context, ino uint64) (Change, bool, error) {
	oa, err1 := d.from.t.attr(ctx, ino)
	na, err2 := d.to.t.attr(ctx, ino)
	if err1 != nil || err2 != nil || oa.typ != na.typ {
		return Change{}, false, nil // created or dropped: entries report it
	}
	same := oa.perm == na.perm && oa.uid == na.uid && oa.gid == na.gid
	if same && na.typ != typeDir {
		same = oa.size == na.size && oa.mtime == na.mtime
	}
	if same {
		for _, kind := range []byte{kindContent, kindLink, kindXattr} {
			eq, err := d.recordsEqual(ctx, ino, kind)
			if err != nil {
				return Change{}, false, err
			}
			if !eq && (kind == kindXattr || na.typ != typeDir) {
				same = false
				break
			}
		}
	}
	if same {
		return Change{}, false, nil
	}
	p := "."
	if ino != rootIno {
		var err error
		if p, err = d.to.path(ctx, loc{parent: na.parent, name: na.name}); err != nil {
			return Change{}, false, err
		}
	}
	c := Change{Op: Modified, Path: p, Type: na.typ.String(), oldIno: ino, newIno: ino}
	if na.typ != typeDir {
		c.Size, c.OldSize = na.size, oa.size
	}
	return c, true, nil
}

// recordsEqual compares one kind of record of ino in both states.
func (d *differ) recordsEqual(ctx context.Context, ino uint64, kind byte) (bool, error) {
	collect := func(s *side) ([][]byte, error) {
		var out [][]byte
		start, end := inoRange(ino, kind)
		err := s.t.view.Scan(ctx, start, end, func(k, v []byte) error {
			out = append(out, append(append([]byte{}, k...), v...))
			return nil
		})
		return out, err
	}
	a, err := collect(&d.from)
	if err != nil {
		return false, err
	}
	b, err := collect(&d.to)
	if err != nil {
		return false, err
	}
	return slices.EqualFunc(a, b, bytes.Equal), nil
}

// unified fills c.Unified when each side of c is absent or a text file.
func (d *differ) unified(ctx context.Context, c *Change) error {
	oldText, ok, err := d.from.text(ctx, c.oldIno)
	if err != nil || !ok {
		return err
	}
	newText, ok, err := d.to.text(ctx, c.newIno)
	if err != nil || !ok || bytes.Equal(oldText, newText) {
		return err
	}
	oldLabel, newLabel := "a/"+c.Path, "b/"+c.Path
	if c.Op == Renamed {
		oldLabel = "a/" + c.OldPath
	}
	c.Unified = textdiff.Unified(oldLabel, newLabel, string(oldText), string(newText))
	return nil
}

// text returns the contents of inode ino in s; ok is false unless it is a
// text file (no NUL byte, at most MaxDiffText bytes). Inode 0 is an
// absent side: empty text.
func (s *side) text(ctx context.Context, ino uint64) (data []byte, ok bool, err error) {
	if ino == 0 {
		return nil, true, nil
	}
	a, err := s.t.attr(ctx, ino)
	if err != nil || a.typ != typeFile || a.size > MaxDiffText {
		return nil, false, err
	}
	m, err := s.t.manifest(ctx, ino)
	if err != nil {
		return nil, false, err
	}
	data, err = s.fs.readAll(ctx, m)
	if err != nil || bytes.IndexByte(data, 0) >= 0 {
		return nil, false, err
	}
	return data, true, nil
}
