package forkspace_test

import (
	"cmp"
	"context"
	"fmt"
	"io/fs"
	"path"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"pgregory.net/rapid"

	"github.com/forkspace/forkspace"
	"github.com/forkspace/forkspace/vfs"
)

// node is an entry of the model: a tree keyed by inode number (inode 1 is
// the root), each entry naming its directory, so that renames keep their
// identity as the store's do.
type node struct {
	parent  uint64
	name    string
	dir     bool
	content string
}

type tree map[uint64]node

const rootIno = 1

// readTree reads a state of the store as a model tree.
func readTree(t *rapid.T, f *vfs.FS) tree {
	ctx := context.Background()
	out := tree{}
	inos := map[string]uint64{".": rootIno}
	err := fs.WalkDir(f.IOFS(ctx), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == "." {
			return err
		}
		fi, err := f.Lstat(ctx, p)
		if err != nil {
			return err
		}
		ino := fi.Sys().(*vfs.Attr).Ino
		inos[p] = ino
		n := node{parent: inos[path.Dir(p)], name: path.Base(p), dir: d.IsDir()}
		if !n.dir {
			b, err := f.ReadFile(ctx, p)
			if err != nil {
				return err
			}
			n.content = string(b)
		}
		out[ino] = n
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// pathOf returns the path of entry ino.
func (tr tree) pathOf(ino uint64) string {
	n := tr[ino]
	if n.parent == rootIno {
		return n.name
	}
	return tr.pathOf(n.parent) + "/" + n.name
}

// replacing gives a new file of side that took the place of a file of
// base (same directory inode, same name) the side no longer has the base
// file's identity: the store's diff reports such a replacement as a
// modification.
func replacing(base, side tree) tree {
	type place struct {
		parent uint64
		name   string
	}
	at := map[place]uint64{}
	for ino, n := range base {
		if !n.dir {
			at[place{n.parent, n.name}] = ino
		}
	}
	out := tree{}
	for ino, n := range side {
		out[ino] = n
	}
	for ino, n := range side {
		if b, ok := at[place{n.parent, n.name}]; ok && !n.dir && !inTree(base, ino) && !inTree(side, b) {
			delete(out, ino)
			out[b] = n
		}
	}
	return out
}

// paths renders a model tree as path → content ("<dir>" for directories).
func (tr tree) paths() map[string]string {
	out := map[string]string{}
	pathOf := tr.pathOf
	for ino, n := range tr {
		v := n.content
		if n.dir {
			v = "<dir>"
		}
		out[pathOf(ino)] = v
	}
	return out
}

// modelMerge is the three-way merge of trees the store's merge must
// agree with: per entry, a change on one side applies and the same change
// counts once; a deletion against a change of contents, two different
// renames of one entry, two different contents, an entry whose directory
// is gone or is a file, and two entries at one place are conflicts. A
// deletion against a rename alone is a deletion. (The caller makes the
// same new file, or a new directory, added at one place on both sides one
// entry: alias.)
func modelMerge(base, ours, theirs tree) (tree, bool) {
	out := tree{}
	for ino, n := range ours {
		out[ino] = n
	}
	conflict := false
	inos := map[uint64]bool{}
	for ino := range base {
		inos[ino] = true
	}
	for ino := range theirs {
		inos[ino] = true
	}
	for ino := range inos {
		b, inB := base[ino]
		th, inT := theirs[ino]
		o, inO := ours[ino]
		switch {
		case inB && !inT: // theirs deleted it
			if !inO {
				continue
			}
			if o.content != b.content {
				conflict = true
				continue
			}
			delete(out, ino)
		case !inB && inT: // theirs added it
			out[ino] = th
		case th == b:
		case !inO: // ours deleted what theirs changed
			if th.content != b.content {
				conflict = true
			}
		default:
			merged := o
			// A side moved an entry if its path changed and so did its
			// own place (directory or name): an entry put back at its
			// path in a new directory of the same name did not move, nor
			// did one whose directory alone was renamed.
			bl, ol, tl := base.pathOf(ino), ours.pathOf(ino), theirs.pathOf(ino)
			oursMoved := ol != bl && (o.parent != b.parent || o.name != b.name)
			theirsMoved := tl != bl && (th.parent != b.parent || th.name != b.name)
			switch {
			case !oursMoved: // theirs' place (its directory, if renewed)
				merged.parent, merged.name = th.parent, th.name
			case ol == tl || !theirsMoved || o.parent == th.parent && o.name == th.name: // the same move
			default:
				conflict = true
			}
			switch {
			case o.content == th.content || th.content == b.content:
			case o.content == b.content:
				merged.content = th.content
			default:
				conflict = true
			}
			out[ino] = merged
		}
	}
	// The layout: every entry in an existing directory, one entry a place.
	at := map[string]bool{}
	for _, n := range out {
		p, ok := out[n.parent]
		if n.parent != rootIno && (!ok || !p.dir) {
			conflict = true
		}
		k := fmt.Sprint(n.parent, "/", n.name)
		if at[k] {
			conflict = true
		}
		at[k] = true
	}
	return out, conflict
}

// alias gives a new entry of theirs where ours has the same new entry (a
// directory, or a file with the same contents) ours' identity, so that
// the two count as one (theirs' new entries inside follow), top down; a
// new directory of theirs where ours moved a directory is merged into it;
// a new file of theirs where ours moved an unchanged file with the same
// contents is dropped (the store sees one file added at one place on
// both sides).
func alias(base, ours, theirs tree) tree {
	type place struct {
		parent uint64
		name   string
	}
	ourAt := map[place]uint64{}
	for ino, n := range ours {
		ourAt[place{n.parent, n.name}] = ino
	}
	out := tree{}
	for ino, n := range theirs {
		out[ino] = n
	}
	for changed := true; changed; {
		changed = false
		for _, ino := range sortedInos(out, nil) {
			n := out[ino]
			o, ok := ourAt[place{n.parent, n.name}]
			if inTree(base, ino) || inTree(ours, ino) || !ok {
				continue
			}
			on := ours[o]
			// A new file of theirs where ours moved a file of the base that
			// theirs left alone, with the same contents, is the same
			// change: ours' move stands and theirs' copy is that file.
			if !n.dir && !on.dir && inTree(base, o) && on.content == n.content && out[o] == base[o] {
				delete(out, ino)
				changed = true
				break
			}
			same := !inTree(out, o) && !inTree(base, o) && on.dir == n.dir && (n.dir || on.content == n.content)
			// A new directory of theirs where ours has a directory it
			// moved there is that directory: theirs' new entries go in it.
			// (Unless theirs deleted it: then the new one stands alone.)
			into := !same && n.dir && on.dir && inTree(base, o) && inTree(theirs, o) && base.pathOf(o) != ours.pathOf(o)
			if !same && !into {
				continue
			}
			for c, cn := range out {
				if cn.parent == ino {
					cn.parent = o
					out[c] = cn
				}
			}
			delete(out, ino)
			if same {
				out[o] = n
			}
			changed = true
			break
		}
	}
	return out
}

// renewedDir reports whether side has a directory at the path of a base
// directory it no longer has.
func renewedDir(base, side tree) bool {
	dirs := map[string]bool{}
	for ino, n := range side {
		if n.dir && !inTree(base, ino) {
			dirs[side.pathOf(ino)] = true
		}
	}
	for ino, n := range base {
		if n.dir && !inTree(side, ino) && dirs[base.pathOf(ino)] {
			return true
		}
	}
	return false
}

func inTree(tr tree, ino uint64) bool { _, ok := tr[ino]; return ok }

// sortedInos orders a tree's inodes, ours' first: they claim a place
// before theirs' new ones.
func sortedInos(tr, ours tree) []uint64 {
	var out []uint64
	for ino := range tr {
		out = append(out, ino)
	}
	slices.SortFunc(out, func(a, b uint64) int {
		if inTree(ours, a) != inTree(ours, b) {
			if inTree(ours, a) {
				return -1
			}
			return 1
		}
		return cmp.Compare(a, b)
	})
	return out
}

// TestMergeMatchesModel runs random fork, edit and merge sequences on a
// real store (renames of files and directories, deletions, directories
// replaced by files and back) and checks every merge against modelMerge
// from the same base: the merge has conflicts exactly when the model
// does, and without conflicts it yields the model's tree.
func TestMergeMatchesModel(t *testing.T) {
	rapid.Check(t, func(rt *rapid.T) {
		ctx := context.Background()
		st, err := forkspace.Open(ctx, forkspace.Options{Dir: t.TempDir()})
		if err != nil {
			rt.Fatal(err)
		}
		defer st.Close()
		w0, err := st.Create(ctx, "w0", forkspace.CreateOptions{})
		if err != nil {
			rt.Fatal(err)
		}
		spaces := []*forkspace.Workspace{w0}
		for range 4 {
			edit(rt, w0)
		}
		steps := rapid.IntRange(5, 40).Draw(rt, "steps")
		for i := range steps {
			switch rapid.IntRange(0, 3).Draw(rt, "action") {
			case 0:
				src := rapid.SampledFrom(spaces).Draw(rt, "fork from")
				f, err := src.Fork(ctx, fmt.Sprintf("w%d", i+1), forkspace.ForkOptions{})
				if err != nil {
					rt.Fatal(err)
				}
				spaces = append(spaces, f)
			case 1, 2:
				edit(rt, rapid.SampledFrom(spaces).Draw(rt, "edit"))
			case 3:
				if len(spaces) < 2 {
					continue
				}
				into := rapid.SampledFrom(spaces).Draw(rt, "into")
				from := rapid.SampledFrom(spaces).Draw(rt, "from")
				if into == from {
					continue
				}
				checkMerge(rt, st, into, from)
			}
		}
	})
	t.Logf("%d merges compared with the model, %d made only", merges.compared.Load(), merges.skipped.Load())
}

// merges counts the merges TestMergeMatchesModel compared with the model
// and those it only made.
var merges struct{ compared, skipped atomic.Int64 }

func checkMerge(rt *rapid.T, st *forkspace.Store, into, from *forkspace.Workspace) {
	ctx := context.Background()
	baseState, err := st.MergeBase(ctx, into.Name(), from.Name())
	if err != nil {
		rt.Fatal(err)
	}
	baseFS, err := st.Snapshot(ctx, baseState)
	if err != nil {
		rt.Fatal(err)
	}
	theirsFS, err := st.Snapshot(ctx, from.Name())
	if err != nil {
		rt.Fatal(err)
	}
	base := readTree(rt, baseFS)
	ours := replacing(base, readTree(rt, into.FS))
	theirs := alias(base, ours, replacing(base, readTree(rt, theirsFS)))
	want, conflict := modelMerge(base, ours, theirs)
	// A directory deleted and made again at its path is a new directory to
	// the model (by inode) but partly the same one to the store (which
	// maps paths): such merges are made, not compared (decision 012).
	compare := !renewedDir(base, ours) && !renewedDir(base, theirs)
	if compare {
		merges.compared.Add(1)
	} else {
		merges.skipped.Add(1)
	}
	theirsScript, err := st.Diff(ctx, baseState, from.Name(), vfs.DiffOptions{})
	if err != nil {
		rt.Fatal(err)
	}
	r, err := into.Merge(ctx, from.Name(), forkspace.MergeOptions{})
	if err != nil {
		rt.Fatalf("merge %s into %s: %v", from.Name(), into.Name(), err)
	}
	describe := func() string {
		return fmt.Sprintf("base %v\nours %v\ntheirs %v\nconflicts %+v\nscript to theirs %+v", base, ours, theirs, r.Conflicts, theirsScript)
	}
	if compare && conflict != (len(r.Conflicts) > 0) {
		rt.Fatalf("merge %s into %s: model conflict %v, store %d conflicts\n%s", from.Name(), into.Name(), conflict, len(r.Conflicts), describe())
	}
	if compare && !conflict {
		got := readTree(rt, into.FS).paths()
		if w := want.paths(); !equalMaps(got, w) {
			rt.Fatalf("merge %s into %s:\ngot  %v\nwant %v\n%s", from.Name(), into.Name(), got, w, describe())
		}
		return
	}
	for _, c := range r.Conflicts {
		if err := into.Resolve(ctx, c.Path, forkspace.Resolution{Take: forkspace.TakeOurs}); err != nil {
			rt.Fatalf("resolve %s: %v", c.Path, err)
		}
	}
}

var (
	dirNames  = []string{"a", "b", "c"}
	fileNames = []string{"x", "y", "a"}
)

func randomPath(rt *rapid.T, label string) string {
	depth := rapid.IntRange(0, 2).Draw(rt, label+" depth")
	parts := make([]string, 0, depth+1)
	for range depth {
		parts = append(parts, rapid.SampledFrom(dirNames).Draw(rt, label+" dir"))
	}
	return strings.Join(append(parts, rapid.SampledFrom(fileNames).Draw(rt, label+" name")), "/")
}

// edit makes one random change to w; changes that do not apply (a path
// through a file, a missing source) are skipped.
func edit(rt *rapid.T, w *forkspace.Workspace) {
	ctx := context.Background()
	existing := sortedPaths(readTree(rt, w.FS).paths())
	pick := func(label string) string {
		if len(existing) == 0 {
			return randomPath(rt, label)
		}
		return rapid.SampledFrom(existing).Draw(rt, label)
	}
	switch rapid.IntRange(0, 4).Draw(rt, "op") {
	case 0: // write a file (new or not)
		p := randomPath(rt, "write")
		if w.MkdirAll(ctx, path.Dir(p), 0o755) == nil {
			_ = w.WriteFile(ctx, p, []byte(rapid.SampledFrom([]string{"1", "2", "3"}).Draw(rt, "content")), 0o644)
		}
	case 1: // change a file
		p := pick("change")
		_ = w.WriteFile(ctx, p, []byte(rapid.SampledFrom([]string{"4", "5", "6"}).Draw(rt, "content")), 0o644)
	case 2: // delete a file or a whole directory
		_ = w.RemoveAll(ctx, pick("delete"))
	case 3: // rename a file or directory
		to := randomPath(rt, "rename to")
		if w.MkdirAll(ctx, path.Dir(to), 0o755) == nil {
			_ = w.Rename(ctx, pick("rename"), to)
		}
	case 4: // replace a directory by a file
		p := pick("replace")
		if w.RemoveAll(ctx, p) == nil {
			_ = w.WriteFile(ctx, p, []byte("7"), 0o644)
		}
	}
}

func sortedPaths(m map[string]string) []string {
	out := make([]string, 0, len(m))
	for p := range m {
		out = append(out, p)
	}
	slices.Sort(out)
	return out
}
