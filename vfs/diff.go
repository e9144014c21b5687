package vfs

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
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

// UnmarshalText decodes the String form of an Op (fs.ErrInvalid for any
// other text), so a Change survives a JSON round trip.
func (o *Op) UnmarshalText(b []byte) error {
	for op := Added; op <= Renamed; op++ {
		if string(b) == op.String() {
			*o = op
			return nil
		}
	}
	return fmt.Errorf("%w: change op %q", fs.ErrInvalid, b)
}

// Change is one step of the script that turns one filesystem state into
// another (see Diff for the order and the paths each step names).
type Change struct {
	Op Op `json:"op"`
	// Path names the entry the step acts on: for Deleted, the entry
	// removed; for Renamed, Added and Modified, the entry as the step
	// leaves it.
	Path string `json:"path"`
	// OldPath is the entry a Renamed step moves.
	OldPath string `json:"old_path,omitempty"`
	// Type is "file", "dir", "symlink", "fifo", "socket", "chardev" or
	// "blockdev" (the new type; the old one for
	// Deleted).
	Type    string `json:"type"`
	Size    int64  `json:"size"`
	OldSize int64  `json:"old_size"`
	// Link, on an Added step or a Replaced Modified step, is the path of
	// another hard link of the same file, already in place when the step
	// applies: the step links to it instead of creating a file.
	Link string `json:"link,omitempty"`
	// Replaced marks a Modified step whose path names another file or
	// symbolic link than before (deleted and re-created, or replaced by a
	// new file, as an editor saving through a temporary file does): apply
	// it by replacing the entry, so other hard links of the old file keep
	// the old contents. Without it, a Modified step changes the entry in
	// place (and every hard link of it).
	Replaced bool `json:"replaced,omitempty"`
	// Unified is a unified diff of the contents, set when DiffOptions.Unified
	// is and both sides are text (no NUL byte, at most MaxDiffText bytes),
	// on Added (without Link), Deleted and Modified steps.
	Unified string `json:"unified,omitempty"`

	oldIno, newIno uint64 // the inodes on each side (0 for none)
	oldLabel       string // the from state's path, for Unified
}

// DiffOptions configure Diff.
type DiffOptions struct {
	// Unified adds unified diffs of text contents to changed files.
	Unified bool
}

// MaxDiffText is the largest file Diff renders as a unified diff.
const MaxDiffText = 1 << 20

// Diff returns the changes that turn state from into state to, as a script:
// applying the changes one after another to from, in the order returned
// (ApplyDiff does), yields to. Nothing is folded: Diff walks only the parts
// of the two trees that differ and looks up the keys either staging delta
// holds (kv.View.Diff), so its work is proportional to the change plus the
// deltas, then maps key changes to paths. A live state is read as it is
// durable when Diff starts. Both states must come from the same store.
//
// What is reported:
//   - Deleted: an entry of from that is gone, or that another entry takes
//     the place of. A deleted directory comes after every entry beneath it,
//     each reported too, so each Deleted step removes one entry that is
//     empty by then.
//   - Renamed: an entry moved, with everything beneath it for a directory
//     (one step, the contents are not listed). A rename onto an existing
//     path comes after the Deleted step of the entry it replaces (or after
//     that entry was renamed away): OldPath and Path are never both taken.
//     A moved entry that also changed gets a Modified step as well.
//   - Added: a new entry; a new directory reports itself and each entry in
//     it. An entry that is another hard link of a file present (Link).
//   - Modified: a file whose contents, size, mode, owner, mtime or
//     extended attributes changed, or a directory whose mode, owner or
//     extended attributes changed (reported at each hard link that existed
//     before); or, with Replaced, a path where a new file or symbolic link
//     took the place of one of the same type (so a symbolic link whose
//     target changed). Any other replacement (a change of type, a
//     directory) is Deleted then Added.
//
// Order and paths: the steps that shape the tree come first, deletions as
// early as possible, then renames and new directories, each placed only
// once its parent directory is where it ends up. So Path of a Renamed or
// Added step is the path in to; Path of a Deleted step and OldPath of a
// Renamed step are the path in the state reached so far: the path in from,
// under the new name of any directory an earlier step renamed. When renames
// form a cycle (two entries swapping names, a directory moved into a
// directory that took its place) one of them is first renamed to a
// temporary name at the root (".forkspace-move-N"), and a later Renamed
// step moves it on. New files, symbolic links and hard links and every
// Modified step come last, in path order, with paths in to.
func Diff(ctx context.Context, from, to *FS, opts DiffOptions) ([]Change, error) {
	a, err := from.frozenView()
	if err != nil {
		return nil, fmt.Errorf("diff: %w", err)
	}
	b, err := to.frozenView()
	if err != nil {
		return nil, fmt.Errorf("diff: %w", err)
	}
	d := differ{
		from:    side{fs: from, t: txn{view: a}, paths: map[uint64]string{rootIno: ""}},
		to:      side{fs: to, t: txn{view: b}, paths: map[uint64]string{rootIno: ""}},
		removed: map[uint64][]loc{},
		added:   map[uint64][]loc{},
		touched: map[uint64]bool{},
	}
	if err := a.Diff(ctx, b, d.key); err != nil {
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

// size returns the size of ino in s, or 0 for a directory or missing inode.
func (d *differ) size(ctx context.Context, s *side, ino uint64) int64 {
	a, err := s.t.attr(ctx, ino)
	if err != nil || a.typ == typeDir {
		return 0
	}
	return a.statSize()
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
	c := Change{Op: Modified, Path: p, Type: na.typ.String(), oldIno: ino, newIno: ino, oldLabel: p}
	if ino != rootIno {
		var err error
		if c.oldLabel, err = d.from.path(ctx, loc{parent: oa.parent, name: oa.name}); err != nil {
			return Change{}, false, err
		}
	}
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
// Renames and hard links have none: the contents are another step's.
func (d *differ) unified(ctx context.Context, c *Change) error {
	if c.Op == Renamed || c.Link != "" {
		return nil
	}
	oldText, ok, err := d.from.text(ctx, c.oldIno)
	if err != nil || !ok {
		return err
	}
	newText, ok, err := d.to.text(ctx, c.newIno)
	if err != nil || !ok || bytes.Equal(oldText, newText) {
		return err
	}
	oldLabel := c.oldLabel
	if oldLabel == "" {
		oldLabel = c.Path
	}
	c.Unified = textdiff.Unified("a/"+oldLabel, "b/"+c.Path, string(oldText), string(newText))
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
	data, err = s.fs.d.Content.ReadAll(ctx, m)
	if err != nil || bytes.IndexByte(data, 0) >= 0 {
		return nil, false, err
	}
	return data, true, nil
}
