package forkspace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"

	"github.com/zeebo/blake3"

	"github.com/forkspace/forkspace/errdefs"
	"github.com/forkspace/forkspace/merge"
	"github.com/forkspace/forkspace/vfs"
)

// merger carries theirs' changes (a script from the base) into dst, a
// batch over ours, step by step, translating paths through both sides'
// renames and checking each step against what ours did.
type merger struct {
	base, theirs, dst *vfs.FS
	ours, their       *merge.Side
	paths             *merge.Paths
	policy            MergePolicy
	ids               mergeIDs
	wsID              string
	labels            merge.Labels
	only              []string // nil, or the paths a cherry-pick takes changes under
	mounted           []string // ours' mount roots: their subtrees belong to their sources
	changed           []string
	conflicts         []Conflict
	early             map[string]bool // base paths of deletions carried out ahead of their step
	next              int             // index in their.Steps of the step after the one running
	// parked maps the base path of an entry theirs parked under a
	// temporary name to its merged path before the park.
	parked map[string]string
}

// tempPrefix starts the names vfs.Diff parks entries under.
const tempPrefix = ".forkspace-move-"

func (m *merger) run(ctx context.Context) error {
	for i, st := range m.their.Steps {
		m.next = i + 1
		if !m.wanted(st) {
			continue
		}
		var err error
		switch st.Op {
		case vfs.Deleted:
			if m.early[st.Base] {
				continue
			}
			err = m.deleted(ctx, st)
		case vfs.Renamed:
			err = m.renamed(ctx, st)
		case vfs.Added:
			err = m.added(ctx, st)
		case vfs.Modified:
			err = m.modified(ctx, st)
		}
		if err != nil {
			return fmt.Errorf("%s %s: %w", st.Op, st.Path, err)
		}
	}
	return nil
}

// wanted reports whether a step of theirs is in the merge: never at or
// under one of ours' mount roots (what a mount shows is its source's, and
// a fork's copy of it may be indexed differently); otherwise always, or
// for a cherry-pick when the entry it acts on is, or was in the base, at
// or under one of the picked paths.
func (m *merger) wanted(st merge.Step) bool {
	for _, r := range m.mounted {
		if merge.Under(st.Path, r) || st.Base != "" && merge.Under(st.Base, r) {
			return false
		}
	}
	if m.only == nil {
		return true
	}
	for _, p := range m.only {
		if merge.Under(st.Path, p) || st.Base != "" && merge.Under(st.Base, p) {
			return true
		}
	}
	return false
}

// entry is what a path holds, as far as a merge compares it.
type entry struct {
	typ    string // "file", "dir", "symlink"; "" for nothing
	perm   fs.FileMode
	uid    uint32
	gid    uint32
	size   int64
	hash   string // contents (file) or target (symlink), BLAKE3 hex
	target string
	xattrs map[string]string
}

func (e entry) exists() bool { return e.typ != "" }

// same reports whether two entries are alike in everything a merge
// compares.
func (e entry) same(o entry) bool {
	return e.typ == o.typ && e.perm == o.perm && e.uid == o.uid && e.gid == o.gid && e.hash == o.hash && maps.Equal(e.xattrs, o.xattrs)
}

func readEntry(ctx context.Context, f *vfs.FS, p string) (entry, error) {
	fi, err := f.Lstat(ctx, p)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, errdefs.ErrNotDir) {
		return entry{}, nil
	}
	if err != nil {
		return entry{}, err
	}
	a := fi.Sys().(*vfs.Attr)
	e := entry{perm: fi.Mode().Perm(), uid: a.Uid, gid: a.Gid, size: fi.Size()}
	switch {
	case fi.IsDir():
		e.typ = "dir"
	case fi.Mode()&(fs.ModeNamedPipe|fs.ModeSocket|fs.ModeDevice) != 0:
		e.typ = "special" // FIFO, socket or device: its kind and number are its contents
		e.hash = fmt.Sprintf("%v %d", fi.Mode().Type(), a.Rdev)
	case fi.Mode()&fs.ModeSymlink != 0:
		e.typ = "symlink"
		if e.target, err = f.Readlink(ctx, p); err != nil {
			return entry{}, err
		}
		sum := blake3.Sum256([]byte(e.target))
		e.hash = fmt.Sprintf("%x", sum[:])
	default:
		e.typ = "file"
		if e.hash, err = hashFile(ctx, f, p); err != nil {
			return entry{}, err
		}
	}
	names, err := f.Listxattr(ctx, p)
	if err != nil {
		return entry{}, err
	}
	e.xattrs = map[string]string{}
	for _, n := range names {
		v, err := f.Getxattr(ctx, p, n)
		if err != nil {
			return entry{}, err
		}
		e.xattrs[n] = string(v)
	}
	return e, nil
}

// hashFile returns the BLAKE3 (hex) of a file's contents.
func hashFile(ctx context.Context, f *vfs.FS, p string) (string, error) {
	r, err := f.Open(ctx, p)
	if err != nil {
		return "", err
	}
	defer func() { _ = r.Close() }()
	h := blake3.New()
	if _, err := io.Copy(h, r); err != nil {
		return "", err
	}
	return fmt.Sprintf("%x", h.Sum(nil)), nil
}

// versions names the three versions of base path b (theirs at tp) for a
// conflict.
func (m *merger) versions(b, tp string, be, oe, te entry) (base, ours, theirs ConflictVersion) {
	oursPath, _ := m.ours.Where(b)
	if b == "" {
		oursPath = ""
	}
	return ConflictVersion{State: stateName(m.wsID, m.ids.base), Path: b, Hash: be.hash},
		ConflictVersion{State: stateName(m.wsID, m.ids.ours), Path: oursPath, Hash: oe.hash},
		ConflictVersion{State: stateName(m.wsID, m.ids.merged), Path: tp, Hash: te.hash}
}

// clashAt is clash for what ours has at p, which is not base entry b
// (theirs' b landing where ours has something else, or nothing): ours'
// version is ours' entry at p, or none.
func (m *merger) clashAt(p, kind, detail, b, tp string, be, oe, te entry) bool {
	n := len(m.conflicts)
	takes := m.clash(p, kind, detail, b, tp, be, oe, te)
	if len(m.conflicts) > n {
		m.conflicts[n].Ours.Path = ""
		if oe.exists() {
			m.conflicts[n].Ours.Path = m.paths.Ours(p)
		}
	}
	return takes
}

// clash records a conflict at merged path p and reports whether the
// policy takes theirs' version there.
func (m *merger) clash(p, kind, detail, b, tp string, be, oe, te entry) bool {
	for i := range m.conflicts {
		if m.conflicts[i].Path == p { // one conflict per path
			m.conflicts[i].Detail += "; " + detail
			return m.policy == MergeTheirs
		}
	}
	c := Conflict{Path: p, Kind: kind, Detail: detail}
	c.Base, c.Ours, c.Theirs = m.versions(b, tp, be, oe, te)
	c.Next = fmt.Sprintf("the workspace keeps ours at %s; resolve it with ours, theirs, markers or new content", p)
	switch m.policy {
	case MergeOurs:
		c.Resolved, c.Next = "ours", "settled by the ours policy: nothing to do"
	case MergeTheirs:
		c.Resolved, c.Next = "theirs", "settled by the theirs policy: nothing to do"
	}
	m.conflicts = append(m.conflicts, c)
	return m.policy == MergeTheirs
}

func (m *merger) touched(p string) { m.changed = append(m.changed, p) }

// putTheirs makes merged path p hold theirs' entry at tp (not the entries
// of a directory), replacing what is there and creating missing
// directories above it.
func (m *merger) putTheirs(ctx context.Context, p, tp string) error {
	if err := m.dst.RemoveAll(ctx, p); err != nil {
		return err
	}
	if dir := path.Dir(p); dir != "." {
		if err := m.dst.MkdirAll(ctx, dir, 0o755); err != nil {
			return err
		}
	}
	m.touched(p)
	return copyTree(ctx, m.dst, p, m.theirs, tp)
}

// blocked checks the directories above merged path t (theirs' entry tp)
// in the merged state: when one is missing (ours deleted it) or is not a
// directory (ours replaced it), that is the conflict, recorded at that
// directory. It reports whether t is blocked after the policy had its
// way (theirs: theirs' directory is put back).
func (m *merger) blocked(ctx context.Context, t, tp string) (bool, error) {
	dirs := []string{}
	for d := path.Dir(t); d != "."; d = path.Dir(d) {
		dirs = append(dirs, d)
	}
	for i := len(dirs) - 1; i >= 0; i-- { // from the top
		d := dirs[i]
		de, err := readEntry(ctx, m.dst, d)
		if err != nil || de.typ == "dir" {
			if err != nil {
				return false, err
			}
			continue
		}
		td := tp // theirs' directory at the same depth
		for range i + 1 {
			td = path.Dir(td)
		}
		te, err := readEntry(ctx, m.theirs, td)
		if err != nil {
			return false, err
		}
		var be entry
		b, inBase := m.their.Base(td)
		if !inBase {
			b = ""
		} else if be, err = readEntry(ctx, m.base, b); err != nil {
			return false, err
		}
		kind, detail := merge.DeleteModify, fmt.Sprintf("ours deleted directory %s, theirs changed %s in it", d, tp)
		if de.exists() {
			kind, detail = merge.DirectoryFile, fmt.Sprintf("ours has a %s at %s, theirs a directory (changed %s in it)", de.typ, d, tp)
		}
		if !m.clashAt(d, kind, detail, b, td, be, de, te) {
			return true, nil
		}
		return false, m.putTheirs(ctx, d, td)
	}
	return false, nil
}

// deleted: theirs deleted base entry st.Base.
func (m *merger) deleted(ctx context.Context, st merge.Step) error {
	mp, ok := m.paths.Merged(st.Base)
	if st.Base == "" || !ok {
		return nil // ours deleted it too
	}
	oe, err := readEntry(ctx, m.dst, mp)
	if err != nil || !oe.exists() {
		return err
	}
	be, err := readEntry(ctx, m.base, st.Base)
	if err != nil {
		return err
	}
	if oe.typ == "dir" {
		if err := m.deleteAhead(ctx, st, mp); err != nil {
			return err
		}
		names, err := m.dst.ReadDir(ctx, mp)
		if err != nil {
			return err
		}
		if len(names) > 0 {
			detail := fmt.Sprintf("theirs deleted directory %s; ours has entries in it (%s)", st.Base, names[0].Name())
			if !m.clash(mp, merge.DeleteModify, detail, st.Base, "", be, oe, entry{}) {
				return nil
			}
			m.touched(mp)
			return m.dst.RemoveAll(ctx, mp)
		}
	} else if !oe.same(be) {
		detail := fmt.Sprintf("ours changed %s, theirs deleted it", mp)
		if oe.typ != be.typ {
			detail = fmt.Sprintf("ours replaced %s (a %s) by a %s, theirs deleted it", mp, be.typ, oe.typ)
		}
		if !m.clash(mp, merge.DeleteModify, detail, st.Base, "", be, oe, entry{}) {
			return nil
		}
	}
	m.touched(mp)
	return m.dst.Remove(ctx, mp)
}

// deleteAhead carries out now theirs' later deletions of entries that ours
// moved under directory mp, which theirs deletes in step st: they leave
// mp before it goes, so only what theirs keeps or ours changed is left
// in it to clash.
func (m *merger) deleteAhead(ctx context.Context, st merge.Step, mp string) error {
	for _, later := range m.their.Steps {
		if later.Op != vfs.Deleted || later.Base == st.Base || m.early[later.Base] || !m.wanted(later) {
			continue
		}
		lp, ok := m.paths.Merged(later.Base)
		if !ok || !strings.HasPrefix(lp, mp+"/") {
			continue
		}
		if m.early == nil {
			m.early = map[string]bool{}
		}
		m.early[later.Base] = true
		if err := m.deleted(ctx, later); err != nil {
			return fmt.Errorf("%s %s: %w", later.Op, later.Path, err)
		}
	}
	return nil
}

// renamed: theirs moved base entry st.Base to st.Path (or parked it under
// a temporary name, to move it on later).
func (m *merger) renamed(ctx context.Context, st merge.Step) error {
	src, ok := m.paths.Merged(st.Base)
	if st.Base == "" || !ok {
		return nil // ours deleted it: steps that change it conflict
	}
	if strings.HasPrefix(st.Path, tempPrefix) && !strings.Contains(st.Path, "/") {
		tmp, err := m.freeName(ctx, st.Path)
		if err != nil {
			return err
		}
		if m.parked == nil {
			m.parked = map[string]string{}
		}
		m.parked[st.Base] = src
		m.paths.Moved(st.Base, tmp)
		return m.dst.Rename(ctx, src, tmp)
	}
	t, ok := m.paths.Target(st.Path)
	if !ok {
		t = st.Path // its new directory is gone: place reports it
	}
	if o, moved := m.ours.Moved(st.Base); moved && !strings.HasPrefix(o, tempPrefix) {
		if t == src {
			return nil // the same rename on both sides
		}
		if from, ok := m.parked[st.Base]; ok && t == from {
			// The same rename on both sides, which theirs made by way
			// of a temporary name (into a directory it made where the
			// entry was): it goes back where ours put it, unchanged.
			if ok, err := m.place(ctx, t, st.Base, st.Path); err != nil || !ok {
				return err
			}
			m.paths.Moved(st.Base, t)
			return m.dst.Rename(ctx, src, t)
		}
		be, oe, te, err := m.three(ctx, st.Base, src, st.Path)
		if err != nil {
			return err
		}
		detail := fmt.Sprintf("ours renamed %s to %s, theirs to %s", st.Base, o, st.Path)
		if !m.clash(src, merge.RenameRename, detail, st.Base, st.Path, be, oe, te) {
			return nil
		}
	}
	if t == src {
		return nil
	}
	if ok, err := m.place(ctx, t, st.Base, st.Path); err != nil || !ok {
		return err
	}
	m.paths.Moved(st.Base, t)
	m.touched(t)
	return m.dst.Rename(ctx, src, t)
}

// three reads the base entry b, the merged entry mp and theirs' tp.
func (m *merger) three(ctx context.Context, b, mp, tp string) (be, oe, te entry, err error) {
	if be, err = readEntry(ctx, m.base, b); err != nil {
		return
	}
	if oe, err = readEntry(ctx, m.dst, mp); err != nil {
		return
	}
	te, err = readEntry(ctx, m.theirs, tp)
	return
}

// place checks that merged path t is free for theirs' entry tp (base
// path b, "" if new) inside an existing directory. When it is not, it
// records the conflict and, if the policy takes theirs, clears the way.
func (m *merger) place(ctx context.Context, t, b, tp string) (bool, error) {
	oe, err := readEntry(ctx, m.dst, t)
	if err != nil {
		return false, err
	}
	te, err := readEntry(ctx, m.theirs, tp)
	if err != nil {
		return false, err
	}
	be := entry{}
	if b != "" {
		if be, err = readEntry(ctx, m.base, b); err != nil {
			return false, err
		}
	}
	if blocked, err := m.blocked(ctx, t, tp); err != nil || blocked {
		return false, err
	}
	if oe, err = readEntry(ctx, m.dst, t); err != nil { // the policy may have cleared it
		return false, err
	}
	if !oe.exists() {
		return true, nil
	}
	if parked, err := m.parkAhead(ctx, t); err != nil || parked {
		return parked, err
	}
	kind, detail := merge.AddAdd, fmt.Sprintf("ours and theirs each put a different %s at %s", te.typ, t)
	if oe.typ != te.typ {
		kind, detail = merge.DirectoryFile, fmt.Sprintf("ours has a %s at %s, theirs a %s", oe.typ, t, te.typ)
	}
	if !m.clashAt(t, kind, detail, b, tp, be, oe, te) {
		return false, nil
	}
	return true, m.dst.RemoveAll(ctx, t)
}

// parkAhead moves the entry at merged path t out of the way, to a free
// name at the root, when it is a base entry that a later step of theirs
// renames: in the merged state ours' renames can put it where theirs puts
// something else first (ours renamed directory b to a, theirs replaced
// file b/a by a directory b/a and moved the file into it as b/a/x; the
// new directory a/a comes before the file's move to a/a/x). The later
// step moves it on from there. It reports whether it moved the entry.
func (m *merger) parkAhead(ctx context.Context, t string) (bool, error) {
	for _, later := range m.their.Steps[m.next:] {
		if later.Op != vfs.Renamed || later.Base == "" || !m.wanted(later) {
			continue
		}
		if mp, ok := m.paths.Merged(later.Base); !ok || mp != t {
			continue
		}
		tmp, err := m.freeName(ctx, tempPrefix+"merge")
		if err != nil {
			return false, err
		}
		m.paths.Moved(later.Base, tmp)
		return true, m.dst.Rename(ctx, t, tmp)
	}
	return false, nil
}

// freeName returns name, or name with a suffix, free at the root of dst.
func (m *merger) freeName(ctx context.Context, name string) (string, error) {
	for i := 0; ; i++ {
		n := name
		if i > 0 {
			n = fmt.Sprintf("%s-%d", name, i)
		}
		e, err := readEntry(ctx, m.dst, n)
		if err != nil || !e.exists() {
			return n, err
		}
	}
}

// added: theirs has a new entry at st.Path.
func (m *merger) added(ctx context.Context, st merge.Step) error {
	t, ok := m.paths.Target(st.Path)
	if !ok {
		t = st.Path // its directory is gone: place reports it
	}
	oe, err := readEntry(ctx, m.dst, t)
	if err != nil {
		return err
	}
	if oe.exists() {
		te, err := readEntry(ctx, m.theirs, st.Path)
		if err != nil {
			return err
		}
		if oe.typ == "dir" && te.typ == "dir" || oe.same(te) {
			return nil // the same addition on both sides (directories merge)
		}
	}
	if ok, err := m.place(ctx, t, "", st.Path); err != nil || !ok {
		return err
	}
	m.touched(t)
	if st.Link != "" {
		if src, ok := m.paths.Dest(st.Link); ok {
			if err := m.dst.Link(ctx, src, t); err == nil {
				return nil
			}
		}
	}
	return vfs.CopyEntry(ctx, m.dst, t, m.theirs, st.Path)
}

// modified: theirs changed the entry of base path st.Base, now at
// st.Path; merge field by field with what ours did.
func (m *merger) modified(ctx context.Context, st merge.Step) error {
	if st.Path == "." || st.Base == "" {
		return nil // the root directory's own attributes are not merged
	}
	be, err := readEntry(ctx, m.base, st.Base)
	if err != nil {
		return err
	}
	te, err := readEntry(ctx, m.theirs, st.Path)
	if err != nil || te.same(be) {
		return err // only times changed: nothing a merge carries
	}
	mp, ok := m.paths.Merged(st.Base)
	if !ok {
		t, ok := m.paths.Target(st.Path)
		if !ok {
			t = st.Path
		}
		if blocked, err := m.blocked(ctx, t, st.Path); err != nil || blocked {
			return err
		}
		oe, err := readEntry(ctx, m.dst, t)
		if err != nil {
			return err
		}
		kind, detail := merge.DeleteModify, fmt.Sprintf("ours deleted %s, theirs changed it", st.Base)
		if oe.exists() && oe.typ != te.typ {
			kind, detail = merge.DirectoryFile, fmt.Sprintf("ours replaced %s by a %s, theirs changed the %s", st.Base, oe.typ, te.typ)
		}
		if !m.clash(t, kind, detail, st.Base, st.Path, be, oe, te) {
			return nil
		}
		return m.putTheirs(ctx, t, st.Path)
	}
	oe, err := readEntry(ctx, m.dst, mp)
	if err != nil {
		return err
	}
	if oe.same(te) {
		return nil
	}
	if oe.typ != te.typ {
		detail := fmt.Sprintf("ours has a %s at %s, theirs changed the %s", oe.typ, mp, te.typ)
		if m.clash(mp, merge.DirectoryFile, detail, st.Base, st.Path, be, oe, te) {
			return m.putTheirs(ctx, mp, st.Path)
		}
		return nil
	}
	return m.mergeEntry(ctx, mp, st, be, oe, te)
}

// three merges one field: a change on one side wins, the same change
// counts once, different changes clash.
func three[T comparable](b, o, t T) (T, bool) {
	switch {
	case o == t || t == b:
		return o, true
	case o == b:
		return t, true
	}
	return o, false
}

// mergeEntry merges an entry both sides kept with the same type: contents
// or target, permission bits, owner, extended attributes.
func (m *merger) mergeEntry(ctx context.Context, mp string, st merge.Step, be, oe, te entry) error {
	var kinds, details []string
	clash := func(kind, detail string) {
		kinds, details = append(kinds, kind), append(details, detail)
	}
	// Fields: what the merged entry gets; a clash keeps ours for now.
	perm, ok := three(be.perm, oe.perm, te.perm)
	if !ok {
		clash(merge.Mode, fmt.Sprintf("mode: ours %v, theirs %v", oe.perm, te.perm))
	}
	uid, okU := three(be.uid, oe.uid, te.uid)
	gid, okG := three(be.gid, oe.gid, te.gid)
	if !okU || !okG {
		clash(merge.Mode, fmt.Sprintf("owner: ours %d:%d, theirs %d:%d", oe.uid, oe.gid, te.uid, te.gid))
	}
	xattrs := map[string]string{}
	for _, name := range slices.Sorted(maps.Keys(unionKeys(be.xattrs, oe.xattrs, te.xattrs))) {
		bv, bok := be.xattrs[name]
		ov, ook := oe.xattrs[name]
		tv, tok := te.xattrs[name]
		v, ok := three(xval{bv, bok}, xval{ov, ook}, xval{tv, tok})
		if !ok {
			clash(merge.Xattr, "extended attribute "+name)
		}
		if v.ok {
			xattrs[name] = v.v
		}
	}
	var (
		data        []byte // merged contents, when both changed them
		takeTheirs  bool   // contents or target from theirs
		contentKind string
	)
	if _, ok := three(be.hash, oe.hash, te.hash); ok {
		takeTheirs = oe.hash == be.hash && te.hash != be.hash
	} else if oe.typ == "symlink" {
		contentKind = merge.Symlink
		clash(merge.Symlink, fmt.Sprintf("target: ours %s, theirs %s", oe.target, te.target))
	} else if oe.typ == "special" {
		contentKind = merge.Binary
		clash(merge.Binary, fmt.Sprintf("special file: ours %s, theirs %s", oe.hash, te.hash))
	} else {
		var text bool
		data, text, contentKind = m.mergeText(ctx, mp, st, oe, te)
		if !text {
			clash(merge.Binary, "both changed the contents of a file that is not text")
		} else if contentKind != "" {
			clash(merge.Content, "both changed the same lines")
		}
	}
	if len(kinds) > 0 {
		if m.clash(mp, kinds[0], strings.Join(details, "; "), st.Base, st.Path, be, oe, te) {
			return m.putTheirs(ctx, mp, st.Path)
		}
		// Clashing fields keep ours (three returns ours); the rest merge.
		if contentKind != "" {
			data, takeTheirs = nil, false
		}
	}
	return m.writeEntry(ctx, mp, st, oe, te, perm, uid, gid, xattrs, data, takeTheirs)
}

type xval struct {
	v  string
	ok bool
}

func unionKeys(ms ...map[string]string) map[string]bool {
	out := map[string]bool{}
	for _, m := range ms {
		for k := range m {
			out[k] = true
		}
	}
	return out
}

// mergeText merges the contents of a text file both sides changed. text
// is false unless all three versions are text; kind is merge.Content when
// lines clash.
func (m *merger) mergeText(ctx context.Context, mp string, st merge.Step, oe, te entry) (data []byte, text bool, kind string) {
	read := func(f *vfs.FS, p string) ([]byte, bool) {
		fi, err := f.Lstat(ctx, p)
		if err != nil || fi.Size() > vfs.MaxDiffText {
			return nil, false
		}
		b, err := f.ReadFile(ctx, p)
		return b, err == nil && bytes.IndexByte(b, 0) < 0
	}
	bd, ok1 := read(m.base, st.Base)
	od, ok2 := read(m.dst, mp)
	td, ok3 := read(m.theirs, st.Path)
	if !ok1 || !ok2 || !ok3 {
		return nil, false, merge.Binary
	}
	r := merge.Text(bd, od, td, m.labels)
	if r.Conflicts > 0 {
		return r.Data, true, merge.Content
	}
	return r.Data, true, ""
}

// writeEntry gives merged path mp its merged state: contents (theirs', or
// merged data) first, then whatever mode, owner and extended attributes
// still differ from the merged ones.
func (m *merger) writeEntry(ctx context.Context, mp string, st merge.Step, oe, te entry, perm fs.FileMode, uid, gid uint32, xattrs map[string]string, data []byte, takeTheirs bool) error {
	cur := oe // what mp holds as the steps go
	switch {
	case takeTheirs && oe.typ != "file":
		// a symbolic link or special file changes by being made anew
		if err := m.dst.Remove(ctx, mp); err != nil {
			return err
		}
		if err := vfs.CopyEntry(ctx, m.dst, mp, m.theirs, st.Path); err != nil {
			return err
		}
		cur = te
		if te.typ == "symlink" {
			cur.xattrs = nil // CopyEntry makes a link without them
		}
	case takeTheirs:
		if err := vfs.UpdateEntry(ctx, m.dst, mp, m.theirs, st.Path); err != nil {
			return err
		}
		cur = te
	case data != nil:
		if err := m.dst.WriteFile(ctx, mp, data, perm); err != nil {
			return err
		}
	}
	if oe.typ != "symlink" && perm != cur.perm {
		if err := m.dst.Chmod(ctx, mp, perm); err != nil {
			return err
		}
	}
	if oe.typ != "symlink" && (uid != cur.uid || gid != cur.gid) {
		if err := m.dst.Chown(ctx, mp, int(uid), int(gid)); err != nil {
			return err
		}
	}
	for n := range cur.xattrs {
		if _, keep := xattrs[n]; !keep {
			if err := m.dst.Removexattr(ctx, mp, n); err != nil {
				return err
			}
		}
	}
	for n, v := range xattrs {
		if old, ok := cur.xattrs[n]; !ok || old != v {
			if err := m.dst.Setxattr(ctx, mp, n, []byte(v)); err != nil {
				return err
			}
		}
	}
	if takeTheirs || data != nil || perm != oe.perm || uid != oe.uid || gid != oe.gid || !maps.Equal(xattrs, oe.xattrs) {
		m.touched(mp)
	}
	return nil
}
